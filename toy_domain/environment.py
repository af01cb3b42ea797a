"""The toy environment: the five services a tool call can touch, and their JSON snapshot."""

from dataclasses import dataclass

from toy_domain.bank import Bank
from toy_domain.calendar_service import Calendar
from toy_domain.inventory import Inventory
from toy_domain.storage import Storage
from toy_domain.vouchers import Vouchers


@dataclass
class ToyEnvironment:
    """One instance of the toy domain. Attribute names are the tools' injected parameters."""

    bank: Bank
    inventory: Inventory
    calendar: Calendar
    storage: Storage
    vouchers: Vouchers

    def to_json(self) -> dict:
        """The whole state as JSON: one key per service (bank, inventory, calendar, storage,
        vouchers)."""
        return {
            "bank": self.bank.to_json(),
            "inventory": self.inventory.to_json(),
            "calendar": self.calendar.to_json(),
            "storage": self.storage.to_json(),
            "vouchers": self.vouchers.to_json(),
        }

    def reset(self) -> None:
        """The reset path: each service restores its own seed state."""
        self.bank.reset()
        self.inventory.reset()
        self.calendar.reset()
        self.storage.reset()
        self.vouchers.reset()


def fresh_environment() -> ToyEnvironment:
    """A new environment in the seed state."""
    return ToyEnvironment(
        bank=Bank(),
        inventory=Inventory(),
        calendar=Calendar(),
        storage=Storage(),
        vouchers=Vouchers(),
    )
