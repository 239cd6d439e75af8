"""Document structures and the geometry convention."""

from vision.structures.document import Block, Document, Line, Page, Region, TimelineEntry, Word
from vision.structures.geometry import BBox, Polygon

__all__ = ["BBox", "Block", "Document", "Line", "Page", "Polygon", "Region", "TimelineEntry", "Word"]
