"""Document structures and the geometry convention."""

from vision.structures.document import Block, Document, Line, Page, Region, TimelineEntry, Word
from vision.structures.geometry import BBox, Polygon, box_to_pixels
from vision.structures.mask import mask_from_rle, mask_to_rle
from vision.structures.table import BLOCK_KINDS, Table, TableCell

__all__ = [
    "BLOCK_KINDS",
    "BBox",
    "Block",
    "Document",
    "Line",
    "Page",
    "Polygon",
    "Region",
    "Table",
    "TableCell",
    "TimelineEntry",
    "Word",
    "box_to_pixels",
    "mask_from_rle",
    "mask_to_rle",
]
