"""The toy environment: the three services a tool call can touch, and their JSON snapshot."""

from dataclasses import dataclass

from toy_domain.bank import Bank
from toy_domain.calendar_service import Calendar
from toy_domain.inventory import Inventory


@dataclass
class ToyEnvironment:
    """One instance of the toy domain. Attribute names are the tools' injected parameters."""

    bank: Bank
    inventory: Inventory
    calendar: Calendar

    def to_json(self) -> dict:
        """The whole state as JSON: {"bank": ..., "inventory": ..., "calendar": ...}."""
        return {
            "bank": self.bank.to_json(),
            "inventory": self.inventory.to_json(),
            "calendar": self.calendar.to_json(),
        }

    def reset(self) -> None:
        """The reset path: each service restores its own seed state."""
        self.bank.reset()
        self.inventory.reset()
        self.calendar.reset()


def fresh_environment() -> ToyEnvironment:
    """A new environment in the seed state."""
    return ToyEnvironment(bank=Bank(), inventory=Inventory(), calendar=Calendar())
