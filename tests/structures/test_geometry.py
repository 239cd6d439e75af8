import pytest

from vision.structures.geometry import box_to_pixels, box_to_polygon, clip_box, polygon_to_box, union_box


def test_clip_box_orders_and_clamps():
    assert clip_box((1.2, 0.5, -0.1, 0.25)) == (0.0, 0.25, 1.0, 0.5)


def test_union_box():
    assert union_box([(0.1, 0.2, 0.3, 0.4), (0.0, 0.3, 0.2, 0.9)]) == (0.0, 0.2, 0.3, 0.9)
    with pytest.raises(ValueError):
        union_box([])


def test_polygon_and_box_convert_both_ways():
    box = (0.1, 0.2, 0.5, 0.7)
    polygon = box_to_polygon(box)
    assert polygon == ((0.1, 0.2), (0.5, 0.2), (0.5, 0.7), (0.1, 0.7))  # clockwise from top-left
    assert polygon_to_box(polygon) == box
    assert polygon_to_box(((0.2, 0.1), (0.6, 0.3), (0.4, 0.7), (0.0, 0.5))) == (0.0, 0.1, 0.6, 0.7)


def test_box_to_pixels_rounds_and_clamps_on_height_width_pages():
    assert box_to_pixels((0.1, 0.25, 0.5, 1.0), (200, 100)) == (10, 50, 50, 200)
    assert box_to_pixels((-0.5, 0.0, 1.5, 0.004), (100, 100)) == (0, 0, 100, 0)
