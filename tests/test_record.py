"""record.Record: the frozen value types' base behaves like a frozen dataclass where the
package relies on it (construction, validation, immutability, equality, fields, replace)."""
from typing import ClassVar

import pytest

from prvgui.accounting.record import MISSING, FrozenError, Record, fields, replace


class Point(Record):
    x: float
    y: float = 0.0
    tag: ClassVar[str] = "point"

    def __post_init__(self) -> None:
        if self.x < 0:
            raise ValueError(f"x must be >= 0, got {self.x!r}")
        object.__setattr__(self, "x", float(self.x))


class Point3(Point):
    z: float = 1.0


def test_construction_defaults_and_validation():
    assert Point(1).x == 1.0 and Point(1).y == 0.0
    assert Point(1, 2) == Point(x=1, y=2) == Point(1, y=2)
    assert Point3(1, 2, 3).z == 3 and Point3(1).z == 1.0
    with pytest.raises(ValueError, match="x must be"):
        Point(-1)
    with pytest.raises(TypeError, match="missing"):
        Point()
    with pytest.raises(TypeError, match="unexpected"):
        Point(1, w=2)
    with pytest.raises(TypeError, match="multiple"):
        Point(1, x=2)
    with pytest.raises(TypeError, match="takes"):
        Point(1, 2, 3)


def test_fields_skip_classvars_and_keep_order():
    assert [f.name for f in fields(Point3)] == ["x", "y", "z"]
    assert [f.default for f in fields(Point)] == [MISSING, 0.0]
    assert fields(Point(1)) == fields(Point)
    with pytest.raises(TypeError, match="without a default"):
        class Bad(Record):  # noqa: F841 - defining it is the test
            a: int = 1
            b: int


def test_frozen_equal_hashable_and_replace():
    p = Point(1, 2)
    with pytest.raises(FrozenError):
        p.x = 3
    with pytest.raises(AttributeError):
        del p.y
    assert p == Point(1, 2) and p != Point(1, 3) and p != Point3(1, 2)
    assert hash(p) == hash(Point(1, 2)) and len({p, Point(1, 2)}) == 1
    assert replace(p, y=5) == Point(1, 5) and p.y == 2
    with pytest.raises(ValueError):
        replace(p, x=-1)  # validated again
    with pytest.raises(TypeError, match="no field"):
        replace(p, w=1)
    assert repr(p) == "Point(x=1.0, y=2)"
