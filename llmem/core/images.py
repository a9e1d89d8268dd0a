"""Pictures that travel beside a tool's JSON answer.

A tool that draws answers its JSON and, beside it, image content; in Python the same answer
model carries the pictures in ``images``, left out of its JSON (``model_dump``) exactly as the
image content is left out of the tool's structured content.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

__all__ = ["Image", "WithImages"]


class Image(BaseModel):
    """One picture: its media type (``image/png``, ``image/svg+xml``) and its bytes."""

    media_type: str
    data: bytes = Field(repr=False)

    def save(self, path: str | Path) -> Path:
        """Write the picture to ``path`` (its folders are made) and return that path."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(self.data)
        return target


class WithImages(BaseModel):
    """An answer with pictures: ``images`` holds them, in the order the tool sends them, and is
    never part of the answer's JSON."""

    images: list[Image] = Field(default_factory=list, exclude=True, repr=False)

    def save_image(self, path: str | Path, index: int = 0) -> Path:
        """Write picture ``index`` (the first by default) to ``path``; IndexError if there is none."""
        return self.images[index].save(path)
