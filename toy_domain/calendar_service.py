"""The toy calendar: rooms with eight slots a day (0..7) and the meetings booked in them.

Every meeting's slot is in its room's `booked` list, every booked slot belongs to exactly
one meeting, and `booked` is kept sorted; `book_meeting` and `cancel_meeting` keep that
true together. (Named `calendar_service` so it does not shadow the standard `calendar`.)
"""

import bisect
from dataclasses import dataclass

FIRST_SLOT = 0
LAST_SLOT = 7


@dataclass
class Room:
    capacity: int
    booked: list[int]

    def to_json(self) -> dict:
        return {"capacity": self.capacity, "booked": list(self.booked)}


@dataclass
class Meeting:
    room: str
    slot: int
    title: str
    attendees: list[str]

    def to_json(self) -> dict:
        return {
            "room": self.room,
            "slot": self.slot,
            "title": self.title,
            "attendees": list(self.attendees),
        }


SEED_NEXT_MEETING = 3


def seed_rooms() -> dict[str, Room]:
    """New Room objects for the seed state; `booked` matches `seed_meetings`."""
    return {
        "aurora": Room(capacity=4, booked=[2, 5]),
        "borealis": Room(capacity=2, booked=[]),
        "cosmos": Room(capacity=10, booked=[]),
    }


def seed_meetings() -> dict[str, Meeting]:
    """New Meeting objects for the seed state."""
    return {
        "m-1": Meeting(room="aurora", slot=2, title="Standup", attendees=["alice", "bob"]),
        "m-2": Meeting(room="aurora", slot=5, title="Retro", attendees=["carol"]),
    }


class Calendar:
    """The calendar service: the object the calendar tools receive as `calendar`."""

    def __init__(self) -> None:
        self.rooms: dict[str, Room] = seed_rooms()
        self.meetings: dict[str, Meeting] = seed_meetings()
        self.next_meeting: int = SEED_NEXT_MEETING

    def reset(self) -> None:
        """Restore the seed state."""
        # One statement per field (not a generic copy), so each is a reset mutation site.
        self.rooms = seed_rooms()
        self.meetings = seed_meetings()
        self.next_meeting = SEED_NEXT_MEETING

    def to_json(self) -> dict:
        return {
            "rooms": {name: room.to_json() for name, room in self.rooms.items()},
            "meetings": {key: meeting.to_json() for key, meeting in self.meetings.items()},
            "next_meeting": self.next_meeting,
        }

    def _book_slot(self, room: str, slot: int) -> None:
        bisect.insort(self.rooms[room].booked, slot)

    def _free_slot(self, room: str, slot: int) -> None:
        self.rooms[room].booked.remove(slot)

    def _add_meeting(self, room: str, slot: int, title: str, attendees: list[str]) -> str:
        meeting_id = f"m-{self.next_meeting}"
        self.next_meeting += 1
        self.meetings[meeting_id] = Meeting(
            room=room, slot=slot, title=title, attendees=list(attendees)
        )
        return meeting_id


def book_meeting(
    calendar: Calendar, room: str, slot: int, title: str, attendees: list[str]
) -> dict:
    """Book a meeting in a room at a time slot.

    Creates the meeting and marks the slot as booked in the room.

    :param room: Name of the room, e.g. "aurora".
    :param slot: Time slot of the day, from 0 to 7.
    :param title: Title of the meeting.
    :param attendees: Names of the attendees; at most the room's capacity.

    Raises ValueError if the room does not exist.
    Raises ValueError if the slot is not between 0 and 7.
    Raises ValueError if the slot is already booked in the room.
    Raises ValueError if the title is empty.
    Raises ValueError if there are more attendees than the room's capacity.
    The new meeting gets the id "m-N", where N is the next meeting number.
    The meeting records the room, the slot, the title and the attendees.
    The slot is added to the room's booked slots.
    Existing meetings are left unchanged.
    Every meeting's slot is booked in its room and every booked slot has exactly one meeting.
    A room's booked slots are kept sorted, without duplicates.
    The meeting is always booked unless a ValueError is raised.
    Returns the meeting: meeting_id, room, slot, title and attendees.
    """
    if room not in calendar.rooms:
        raise ValueError(f"Room {room} does not exist")
    if slot < FIRST_SLOT or slot > LAST_SLOT:
        raise ValueError(f"Slot must be between {FIRST_SLOT} and {LAST_SLOT}, got {slot}")
    if slot in calendar.rooms[room].booked:
        raise ValueError(f"Slot {slot} is already booked in {room}")
    if title == "":
        raise ValueError("Title must not be empty")
    if len(attendees) > calendar.rooms[room].capacity:
        raise ValueError(
            f"{len(attendees)} attendees exceed the capacity {calendar.rooms[room].capacity}"
            f" of {room}"
        )
    meeting_id = calendar._add_meeting(room, slot, title, attendees)
    calendar._book_slot(room, slot)
    return {"meeting_id": meeting_id, **calendar.meetings[meeting_id].to_json()}


def cancel_meeting(calendar: Calendar, meeting_id: str) -> str:
    """Cancel a meeting.

    Deletes the meeting and frees its slot in its room.

    :param meeting_id: ID of the meeting, e.g. "m-1".

    Raises ValueError if the meeting does not exist.
    The meeting is deleted; other meetings are left unchanged.
    The meeting's slot is removed from its room's booked slots.
    Every meeting's slot is booked in its room and every booked slot has exactly one meeting.
    A room's booked slots are kept sorted, without duplicates.
    The meeting is always cancelled unless a ValueError is raised.
    Returns a confirmation message.
    """
    if meeting_id not in calendar.meetings:
        raise ValueError(f"Meeting {meeting_id} does not exist")
    meeting = calendar.meetings.pop(meeting_id)
    calendar._free_slot(meeting.room, meeting.slot)
    return f"Cancelled {meeting_id} ({meeting.title}) in {meeting.room}, slot {meeting.slot}."


def rename_meeting(calendar: Calendar, meeting_id: str, title: str) -> dict:
    """Rename a meeting.

    :param meeting_id: ID of the meeting, e.g. "m-1".
    :param title: New title of the meeting.

    Raises ValueError if the meeting does not exist.
    Raises ValueError if the title is empty.
    The meeting's title becomes the new title; nothing else changes.
    The title is always changed unless a ValueError is raised.
    Returns the meeting: meeting_id, room, slot, title and attendees.
    """
    if meeting_id not in calendar.meetings:
        raise ValueError(f"Meeting {meeting_id} does not exist")
    if title == "":
        raise ValueError("Title must not be empty")
    meeting = calendar.meetings[meeting_id]
    meeting.title = title
    return {"meeting_id": meeting_id, **meeting.to_json()}
