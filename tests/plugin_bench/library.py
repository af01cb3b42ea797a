"""A lending library: two tools over one environment."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Book:
    copies: int
    lent_to: list[str] = field(default_factory=list)


@dataclass
class Library:
    books: dict[str, Book]
    loans: int = 0


def fresh_library() -> Library:
    return Library({"Dune": Book(3, ["cid", "eve"]), "Emma": Book(1, ["dan"]), "Ulysses": Book(3)})


def lend_book(library: Library, title: str, reader: str) -> dict:
    """Lend one copy of a book to a reader.

    Raises KeyError if the library has no such title.
    Raises ValueError if every copy is lent out.
    The reader is added to the book's borrowers.
    The loan counter goes up by one.
    Returns the title and the number of copies still available.
    """
    if title not in library.books:
        raise KeyError(title)
    book = library.books[title]
    if len(book.lent_to) >= book.copies:
        raise ValueError(f"no copy of {title} left")
    book.lent_to.append(reader)
    library.loans += 1
    return {"title": title, "available": book.copies - len(book.lent_to)}


def return_book(library: Library, title: str, reader: str) -> str:
    """Take a lent copy back from a reader.

    Raises ValueError if the reader has not borrowed the book.
    The reader is removed from the book's borrowers.
    """
    book = library.books.get(title)
    if book is None or reader not in book.lent_to:
        raise ValueError(f"{reader} has not borrowed {title}")
    book.lent_to.remove(reader)
    return f"{reader} returned {title}"


TOOLS = {"lend_book": lend_book, "return_book": return_book}
