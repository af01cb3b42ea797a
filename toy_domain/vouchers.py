"""The toy voucher service, written in the refusal-by-return style: no tool raises. The
tools answer `{"error": ...}` when they refuse, and the verifier they share answers
`(ok, reason)`. A voucher token carries its code, its expiry on the service clock (`clock`,
whole seconds, moved only by `advance_voucher_clock`) and an HMAC-SHA256 signature over
the bytes before it; tokens are observation artifacts, like the storage's presigned URLs.
"""

import hashlib
import hmac
from dataclasses import dataclass

# The service's signing secret; a real service keeps it out of the source.
VOUCHER_KEY = b"toy-domain-voucher-key"
MAX_AMOUNT = 500
MAX_TTL = 3600
SEED_CLOCK = 5000
SEED_NEXT_CODE = 2
SEED_REDEEMED_TOTAL = 10


def voucher_signature(body: str) -> str:
    """HMAC-SHA256 over the exact bytes of the token body, hex."""
    return hmac.new(VOUCHER_KEY, body.encode("utf-8"), hashlib.sha256).hexdigest()


def signature_ok(body: str, signature: str) -> bool:
    """Whether `signature` is the signature of `body`."""
    return voucher_signature(body) == signature


@dataclass
class Voucher:
    amount: int
    expires_at: int
    token: str
    redeemed: bool = False

    def to_json(self) -> dict:
        return {
            "amount": self.amount,
            "expires_at": self.expires_at,
            "token": self.token,
            "redeemed": self.redeemed,
        }


def signed_token(code: str, expires_at: int) -> str:
    body = f"{code}:{expires_at}"
    return f"{body}.{voucher_signature(body)}"


def seed_vouchers() -> dict[str, Voucher]:
    """The seed state's vouchers: V-0 redeemed already, V-1 live; both issued before the
    seed time."""
    expires_at = SEED_CLOCK + 600
    return {
        code: Voucher(amount, expires_at, signed_token(code, expires_at), redeemed)
        for code, amount, redeemed in (("V-0", 10, True), ("V-1", 20, False))
    }


class Vouchers:
    """The voucher service: the object the voucher tools receive as `vouchers`."""

    def __init__(self) -> None:
        self.clock: int = SEED_CLOCK
        self.vouchers: dict[str, Voucher] = seed_vouchers()
        self.next_code: int = SEED_NEXT_CODE
        self.redeemed_total: int = SEED_REDEEMED_TOTAL

    def reset(self) -> None:
        """Restore the seed state."""
        # One statement per field, so each is a reset mutation site.
        self.clock = SEED_CLOCK
        self.vouchers = seed_vouchers()
        self.next_code = SEED_NEXT_CODE
        self.redeemed_total = SEED_REDEEMED_TOTAL

    def to_json(self) -> dict:
        return {
            "clock": self.clock,
            "vouchers": {code: v.to_json() for code, v in self.vouchers.items()},
            "next_code": self.next_code,
            "redeemed_total": self.redeemed_total,
        }


def verify_token(vouchers: Vouchers, token: str) -> tuple[bool, str]:
    """(True, code) for a token this service issued, unaltered, unexpired and not yet
    redeemed; (False, reason) otherwise."""
    body, _, signature = token.rpartition(".")
    if not body or not signature:
        return False, "missing_token: the token carries no signature"
    if not signature_ok(body, signature):
        return False, "signature_mismatch: the token was altered after it was issued"
    code, _, expires = body.partition(":")
    voucher = vouchers.vouchers.get(code)
    if voucher is None or str(voucher.expires_at) != expires:
        return False, "unknown_token: the token was not issued by this service"
    unexpired = vouchers.clock < voucher.expires_at
    if not unexpired:
        return False, f"expired_before_use: the voucher expired at {voucher.expires_at}"
    if not voucher.redeemed:
        return True, code
    return False, "already_redeemed: the voucher was redeemed before"


def issue_voucher(vouchers: Vouchers, amount: int, ttl: int) -> dict:
    """Issue a signed voucher token worth an amount.

    :param amount: Amount of the voucher, 1 to 500.
    :param ttl: Seconds the voucher stays valid, 1 to 3600.

    Answers {"error": ...} if the amount is not between 1 and 500.
    Answers {"error": ...} if the ttl is not between 1 and 3600 seconds.
    The voucher is recorded under the next code "V-N" with the amount, the expiry clock + ttl
    and the token.
    The token is the code, a colon, the expiry, a dot and an HMAC-SHA256 signature of the rest.
    The voucher is always issued unless the answer has an "error".
    Returns the token, the code and the expiry.
    """
    if amount < 1 or amount > MAX_AMOUNT:
        return {"error": f"amount must be between 1 and {MAX_AMOUNT}, got {amount}"}
    if ttl < 1 or ttl > MAX_TTL:
        return {"error": f"ttl must be between 1 and {MAX_TTL} seconds, got {ttl}"}
    code = f"V-{vouchers.next_code}"
    vouchers.next_code += 1
    expires_at = vouchers.clock + ttl
    token = signed_token(code, expires_at)
    vouchers.vouchers[code] = Voucher(amount=amount, expires_at=expires_at, token=token)
    return {"token": token, "code": code, "expires_at": expires_at}


def redeem_voucher(vouchers: Vouchers, token: str) -> dict:
    """Redeem a voucher token.

    :param token: A token issued by issue_voucher, exactly as issued.

    Answers {"error": ...} if the token carries no signature (missing token).
    Answers {"error": ...} if the signature does not match the exact token bytes.
    Answers {"error": ...} if the token was not issued by this service.
    Answers {"error": ...} if the voucher has expired.
    A voucher is valid while clock < its expiry on the service clock.
    Answers {"error": ...} if the voucher was already redeemed.
    Redeeming marks the voucher redeemed and adds its amount to the redeemed total.
    The voucher is always redeemed unless the answer has an "error".
    Returns the code and the amount.
    """
    ok, detail = verify_token(vouchers, token)
    if not ok:
        return {"error": detail}
    voucher = vouchers.vouchers[detail]
    voucher.redeemed = True
    vouchers.redeemed_total += voucher.amount
    return {"code": detail, "amount": voucher.amount}


def advance_voucher_clock(vouchers: Vouchers, seconds: int) -> dict:
    """Advance the voucher service clock.

    :param seconds: Seconds to move the clock forward, a positive whole number.

    Answers {"error": ...} if the seconds are not positive.
    The clock moves forward by exactly the seconds; nothing else changes.
    The clock always advances unless the answer has an "error".
    Returns the new time.
    """
    if seconds <= 0:
        return {"error": f"seconds must be positive, got {seconds}"}
    vouchers.clock += seconds
    return {"clock": vouchers.clock}
