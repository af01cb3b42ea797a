"""The toy inventory: items with stock and reservations, and one global lock.

An item's `reserved` count is the sum of its reservations' quantities and never exceeds its
stock; `reserve_item`, `release_reservation` and `restock` keep that true together.
"""

from dataclasses import dataclass


@dataclass
class Item:
    name: str
    stock: int
    reserved: int
    price: int
    min_stock: int

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "stock": self.stock,
            "reserved": self.reserved,
            "price": self.price,
            "min_stock": self.min_stock,
        }


@dataclass
class Reservation:
    sku: str
    quantity: int
    customer: str

    def to_json(self) -> dict:
        return {"sku": self.sku, "quantity": self.quantity, "customer": self.customer}


SEED_NEXT_RESERVATION = 3
SEED_LOCK_HOLDER: str | None = None


def seed_items() -> dict[str, Item]:
    """New Item objects for the seed state; `reserved` matches `seed_reservations`."""
    return {
        "sku-apple": Item(name="Apple", stock=40, reserved=3, price=2, min_stock=10),
        "sku-pear": Item(name="Pear", stock=6, reserved=2, price=5, min_stock=2),
        "sku-sample": Item(name="Free sample", stock=8, reserved=0, price=0, min_stock=0),
    }


def seed_reservations() -> dict[str, Reservation]:
    """New Reservation objects for the seed state."""
    return {
        "res-1": Reservation(sku="sku-apple", quantity=3, customer="dave"),
        "res-2": Reservation(sku="sku-pear", quantity=2, customer="erin"),
    }


class Inventory:
    """The inventory service: the object the inventory tools receive as `inventory`."""

    def __init__(self) -> None:
        self.items: dict[str, Item] = seed_items()
        self.reservations: dict[str, Reservation] = seed_reservations()
        self.lock_holder: str | None = SEED_LOCK_HOLDER
        self.next_reservation: int = SEED_NEXT_RESERVATION

    def reset(self) -> None:
        """Restore the seed state."""
        # One statement per field (not a generic copy), so each is a reset mutation site.
        self.items = seed_items()
        self.reservations = seed_reservations()
        self.lock_holder = SEED_LOCK_HOLDER
        self.next_reservation = SEED_NEXT_RESERVATION

    def to_json(self) -> dict:
        return {
            "items": {sku: item.to_json() for sku, item in self.items.items()},
            "reservations": {key: res.to_json() for key, res in self.reservations.items()},
            "lock_holder": self.lock_holder,
            "next_reservation": self.next_reservation,
        }

    def _add_reservation(self, sku: str, quantity: int, customer: str) -> str:
        reservation_id = f"res-{self.next_reservation}"
        self.next_reservation += 1
        self.reservations[reservation_id] = Reservation(
            sku=sku, quantity=quantity, customer=customer
        )
        return reservation_id

    def _remove_reservation(self, reservation_id: str) -> Reservation:
        return self.reservations.pop(reservation_id)


def reserve_item(inventory: Inventory, sku: str, quantity: int, customer: str) -> dict:
    """Reserve units of an item for a customer.

    Creates a reservation and counts its units as reserved on the item, so they are no
    longer available to others. Stock is not reduced.

    :param sku: SKU of the item, e.g. "sku-apple".
    :param quantity: Number of units to reserve, a positive whole number.
    :param customer: Name of the customer the units are reserved for.

    Raises ValueError if the item does not exist.
    Raises ValueError if the quantity is not positive.
    Raises ValueError if the quantity exceeds the available units (stock minus reserved).
    Raises ValueError if the customer is empty.
    Raises ValueError if the inventory is locked by someone other than the customer.
    The new reservation gets the id "res-N", where N is the next reservation number.
    The reservation records the item, the quantity and the customer.
    The item's reserved count increases by the quantity.
    Existing reservations are left unchanged.
    An item's reserved count always equals the sum of its reservations' quantities.
    An item's reserved count never exceeds its stock.
    The reservation is always made unless a ValueError is raised.
    Returns the reservation: reservation_id, sku, quantity and customer.
    """
    if sku not in inventory.items:
        raise ValueError(f"Item {sku} does not exist")
    if quantity <= 0:
        raise ValueError(f"Quantity must be positive, got {quantity}")
    if customer == "":
        raise ValueError("Customer must not be empty")
    if inventory.lock_holder is not None and inventory.lock_holder != customer:
        raise ValueError(f"Inventory is locked by {inventory.lock_holder}")
    item = inventory.items[sku]
    available = item.stock - item.reserved
    if quantity > available:
        raise ValueError(f"Only {available} units of {sku} available, requested {quantity}")
    reservation_id = inventory._add_reservation(sku, quantity, customer)
    item.reserved += quantity
    reservation = inventory.reservations[reservation_id]
    return {"reservation_id": reservation_id, **reservation.to_json()}


def release_reservation(inventory: Inventory, reservation_id: str) -> str:
    """Release a reservation.

    Deletes the reservation and returns its units to the item's available units.

    :param reservation_id: ID of the reservation, e.g. "res-1".

    Raises ValueError if the reservation does not exist.
    The reservation is deleted; other reservations are left unchanged.
    The item's reserved count decreases by the reservation's quantity.
    An item's reserved count always equals the sum of its reservations' quantities.
    An item's reserved count never exceeds its stock.
    The reservation is always released unless a ValueError is raised.
    Returns a confirmation message.
    """
    if reservation_id not in inventory.reservations:
        raise ValueError(f"Reservation {reservation_id} does not exist")
    reservation = inventory._remove_reservation(reservation_id)
    inventory.items[reservation.sku].reserved -= reservation.quantity
    return f"Released {reservation.quantity} units of {reservation.sku} ({reservation_id})."


def restock(inventory: Inventory, sku: str, quantity: int) -> dict:
    """Add units to an item's stock.

    :param sku: SKU of the item, e.g. "sku-apple".
    :param quantity: Number of units delivered, a positive whole number.

    Raises ValueError if the item does not exist.
    Raises ValueError if the quantity is not positive.
    Raises ValueError if the inventory is locked.
    The item's stock increases by the quantity; nothing else changes.
    An item's reserved count never exceeds its stock.
    The stock is always added unless a ValueError is raised.
    Returns the updated item.
    """
    if sku not in inventory.items:
        raise ValueError(f"Item {sku} does not exist")
    if quantity <= 0:
        raise ValueError(f"Quantity must be positive, got {quantity}")
    if inventory.lock_holder is not None:
        raise ValueError(f"Inventory is locked by {inventory.lock_holder}")
    item = inventory.items[sku]
    item.stock += quantity
    return item.to_json()


def update_item(
    inventory: Inventory, sku: str, price: int | None = None, min_stock: int | None = None
) -> dict:
    """Update the price and/or the minimum stock level of an item.

    Each field given is set; a field left as None keeps its value. Zero is a valid price
    (free items) and a valid minimum stock.

    :param sku: SKU of the item, e.g. "sku-apple".
    :param price: New price, zero or more, or None to keep the current price.
    :param min_stock: New minimum stock level, zero or more, or None to keep it.

    Raises ValueError if the item does not exist.
    Raises ValueError if the price is negative.
    Raises ValueError if the minimum stock is negative.
    The price is set to the given price unless the price is None.
    The minimum stock is set to the given minimum stock unless it is None.
    Only the price and the minimum stock of this item can change.
    The update is always applied unless a ValueError is raised.
    Returns the updated item.
    """
    if sku not in inventory.items:
        raise ValueError(f"Item {sku} does not exist")
    if price is not None and price < 0:
        raise ValueError(f"Price must not be negative, got {price}")
    if min_stock is not None and min_stock < 0:
        raise ValueError(f"Minimum stock must not be negative, got {min_stock}")
    item = inventory.items[sku]
    if price is not None:
        item.price = price
    if min_stock is not None:
        item.min_stock = min_stock
    return item.to_json()


def lock_inventory(inventory: Inventory, holder: str) -> str:
    """Lock the inventory.

    While locked, only the holder can reserve items and nobody can restock.

    :param holder: Name of whoever takes the lock.

    Raises ValueError if the inventory is already locked.
    Raises ValueError if the holder is empty.
    The lock holder becomes the given holder; nothing else changes.
    The lock is always taken unless a ValueError is raised.
    Returns a confirmation message naming the lock holder.
    """
    if inventory.lock_holder is not None:
        raise ValueError(f"Inventory is already locked by {inventory.lock_holder}")
    if holder == "":
        raise ValueError("Lock holder must not be empty")
    inventory.lock_holder = holder
    return f"Inventory locked by {inventory.lock_holder}."


def unlock_inventory(inventory: Inventory, holder: str) -> str:
    """Unlock the inventory.

    :param holder: Name of whoever holds the lock; only the holder can unlock.

    Raises ValueError if the inventory is not locked by this holder.
    The inventory becomes unlocked (no lock holder); nothing else changes.
    The lock is always released unless a ValueError is raised.
    Returns a confirmation message.
    """
    if inventory.lock_holder != holder:
        raise ValueError(f"Inventory is not locked by {holder}")
    inventory.lock_holder = None
    return f"Inventory unlocked by {holder}."
