"""The toy object storage: objects with ETags, presigned download URLs, a rate-limited
export, and a virtual clock (`now`, whole seconds) that only `advance_clock` moves.

Presigned URLs and ETags are observation artifacts: a tool issues them and a later call
must get them back byte for byte, and (URLs) before they expire on the storage clock.
"""

import hashlib
import hmac
from dataclasses import dataclass
from urllib.parse import quote, unquote

DOWNLOAD_BASE = "https://storage.toy/download"
# The service's signing secret; a real service keeps it out of the source.
SIGNING_KEY = b"toy-domain-presign-key"
MAX_TTL = 3600
EXPORT_WINDOW = 60
SEED_NOW = 1000
SEED_NEXT_NONCE = 1
SEED_RETRY_AFTER = 0


def etag_of(version: int, body: str) -> str:
    """The quoted strong ETag of an object version: 16 hex digits of SHA-256."""
    return '"' + hashlib.sha256(f"{version}:{body}".encode()).hexdigest()[:16] + '"'


def sign(query: str) -> str:
    """HMAC-SHA256 over the exact bytes of the signed query string."""
    return hmac.new(SIGNING_KEY, query.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass
class StoredObject:
    body: str
    version: int = 1
    downloads: int = 0

    @property
    def etag(self) -> str:
        return etag_of(self.version, self.body)

    def to_json(self) -> dict:
        return {
            "body": self.body,
            "version": self.version,
            "etag": self.etag,
            "downloads": self.downloads,
        }


def seed_objects() -> dict[str, StoredObject]:
    """New objects for the seed state; one key needs percent-encoding (slash and space)."""
    return {
        "readme.txt": StoredObject(body="hello"),
        "reports/q3 plan.txt": StoredObject(body="grow 10%"),
    }


class Storage:
    """The storage service: the object the storage tools receive as `storage`."""

    def __init__(self) -> None:
        self.now: int = SEED_NOW
        self.objects: dict[str, StoredObject] = seed_objects()
        self.issued: dict[str, dict] = {}
        self.next_nonce: int = SEED_NEXT_NONCE
        self.exports: int = 0
        self.retry_after: int = SEED_RETRY_AFTER

    def reset(self) -> None:
        """Restore the seed state."""
        # One statement per field, so each is a reset mutation site.
        self.now = SEED_NOW
        self.objects = seed_objects()
        self.issued = {}
        self.next_nonce = SEED_NEXT_NONCE
        self.exports = 0
        self.retry_after = SEED_RETRY_AFTER

    def to_json(self) -> dict:
        return {
            "now": self.now,
            "objects": {key: item.to_json() for key, item in self.objects.items()},
            "issued": {nonce: dict(record) for nonce, record in self.issued.items()},
            "next_nonce": self.next_nonce,
            "exports": self.exports,
            "retry_after": self.retry_after,
        }

    def _record_issue(self, key: str, expires_at: int, url: str) -> str:
        nonce = f"n-{self.next_nonce}"
        self.next_nonce += 1
        digest = hashlib.sha256(url.encode("utf-8")).hexdigest()
        self.issued[nonce] = {"key": key, "expires_at": expires_at, "url": url, "digest": digest}
        return nonce


def presign_download(storage: Storage, key: str, ttl: int) -> dict:
    """Issue a presigned download URL for an object.

    :param key: Key of the object, e.g. "readme.txt".
    :param ttl: Seconds the URL stays valid, 1 to 3600.

    Raises ValueError if the object does not exist.
    Raises ValueError if the ttl is not between 1 and 3600 seconds.
    The URL carries the percent-encoded key, its expiry (now + ttl on the storage clock), a
    nonce and an HMAC-SHA256 signature over the exact bytes of the query before it.
    The issue is recorded under the nonce with the key, the expiry, the URL and its SHA-256.
    Nonces are "n-N", where N is the next nonce number; numbers count up.
    The URL is always issued unless a ValueError is raised.
    Returns the url, its nonce and its expiry.
    """
    if key not in storage.objects:
        raise ValueError(f"Object {key} does not exist")
    if ttl < 1 or ttl > MAX_TTL:
        raise ValueError(f"TTL must be between 1 and {MAX_TTL} seconds, got {ttl}")
    expires_at = storage.now + ttl
    nonce = f"n-{storage.next_nonce}"
    query = f"key={quote(key, safe='')}&expires={expires_at}&nonce={nonce}"
    url = f"{DOWNLOAD_BASE}?{query}&sig={sign(query)}"
    storage._record_issue(key, expires_at, url)
    return {"url": url, "nonce": nonce, "expires_at": expires_at}


def download(storage: Storage, url: str) -> dict:
    """Download an object through a presigned URL.

    :param url: A URL issued by presign_download, exactly as issued.

    Raises ValueError if the URL carries no signature (missing token).
    Raises ValueError if the signature does not match the exact query bytes.
    Raises ValueError if the URL's nonce was not issued by this storage (unknown token).
    Raises ValueError if the URL has expired.
    A URL is valid while now < expires on the storage clock.
    Raises ValueError if the object does not exist.
    Every download adds one to the object's download count.
    The download always happens unless a ValueError is raised.
    Returns the object's key and body.
    """
    base, _, query = url.partition("?")
    fields = query.split("&")
    signatures = [f.removeprefix("sig=") for f in fields if f.startswith("sig=")]
    if base != DOWNLOAD_BASE or len(signatures) != 1:
        raise ValueError("Missing token: the URL carries no signature")
    signed = "&".join(f for f in fields if not f.startswith("sig="))
    if not hmac.compare_digest(signatures[0].encode(), sign(signed).encode()):
        raise ValueError("Signature mismatch: the URL was altered after it was issued")
    params = dict(field.partition("=")[::2] for field in signed.split("&"))
    if params.get("nonce") not in storage.issued:
        raise ValueError("Unknown token: the nonce was not issued by this storage")
    expires_at = int(params.get("expires", "0"))
    if not storage.now < expires_at:
        raise ValueError(f"Expired before use: the URL expired at {expires_at}")
    key = unquote(params.get("key", ""))
    if key not in storage.objects:
        raise ValueError(f"Object {key} does not exist")
    storage.objects[key].downloads += 1
    return {"key": key, "body": storage.objects[key].body}


def advance_clock(storage: Storage, seconds: int) -> int:
    """Advance the storage clock.

    :param seconds: Seconds to move the clock forward, a positive whole number.

    Raises ValueError if the seconds are not positive.
    The clock moves forward by exactly the seconds; nothing else changes.
    The clock always advances unless a ValueError is raised.
    Returns the new time.
    """
    if seconds <= 0:
        raise ValueError(f"Seconds must be positive, got {seconds}")
    storage.now += seconds
    return storage.now


def get_object(storage: Storage, key: str) -> dict:
    """Read an object with its ETag.

    :param key: Key of the object, e.g. "readme.txt".

    Raises ValueError if the object does not exist.
    Returns the object's key, body and ETag; nothing changes.
    """
    if key not in storage.objects:
        raise ValueError(f"Object {key} does not exist")
    item = storage.objects[key]
    return {"key": key, "body": item.body, "etag": item.etag}


def update_object(storage: Storage, key: str, body: str, if_match: str) -> str:
    """Replace an object's body, guarded by its ETag (If-Match).

    :param key: Key of the object, e.g. "readme.txt".
    :param body: The new body.
    :param if_match: The ETag the caller last read, exactly as returned by get_object.

    Raises ValueError if the object does not exist.
    Raises ValueError if if_match is not the object's current ETag (version conflict).
    The body becomes the new body and the version goes up by one, which changes the ETag.
    The update always happens unless a ValueError is raised.
    Returns the new ETag.
    """
    if key not in storage.objects:
        raise ValueError(f"Object {key} does not exist")
    item = storage.objects[key]
    if not hmac.compare_digest(if_match.encode(), item.etag.encode()):
        raise ValueError(f"Version conflict: {if_match} is not the current ETag of {key}")
    item.body = body
    item.version += 1
    return item.etag


def export_bucket(storage: Storage) -> dict:
    """Export the list of object keys; rate limited to one export per 60 seconds.

    Raises ValueError while the clock is before retry_after (rate limited; Retry-After).
    Each export counts, and retry_after becomes now + 60.
    The export always happens unless a ValueError is raised.
    Returns the sorted keys and the retry_after time.
    """
    if storage.now < storage.retry_after:
        raise ValueError(f"Rate limited: retry after {storage.retry_after}")
    storage.exports += 1
    storage.retry_after = storage.now + EXPORT_WINDOW
    return {"keys": sorted(storage.objects), "retry_after": storage.retry_after}
