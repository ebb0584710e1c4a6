"""Which segment lies within which: the containment incidents, lagging decays and replays ask.

A segment is (dimension, value), a cross of dimensions joined with `` x ``
(``region x query_band = DE x head``) or all traffic (``all = all``). It lies within another
when it fixes every value the other does; an age band also fixes its product age (the bands
nest in ``new`` and ``established``, ``[segments] new_product_days`` being one of their
edges), so ``age_band = 14-29d`` lies within ``product_age = new`` and shares no rows with
``product_age = established``.
"""

from __future__ import annotations

from feco.config import Segments

Segment = tuple[str, str]


class Nesting:
    """Containment among the segments ``segments`` configures.

    Examples
    --------
    >>> nesting = Nesting(Segments())
    >>> nesting.contains(("product_age", "new"), ("age_band", "14-29d"))
    True
    >>> nesting.overlap(("product_age", "established"), ("age_band", "14-29d"))
    False
    >>> nesting.common_root(("age_band", "0d"), ("age_band", "7-13d"))
    ('product_age', 'new')
    """

    def __init__(self, segments: Segments):
        # an age band fixes its product age only where both are segments (else there is no
        # product-age segment for an incident to widen to)
        nested = {"age_band", "product_age"} <= set(segments.dimensions)
        new = set(segments.new_age_bands())
        self.product_age = {label: "new" if label in new else "established"
                            for label, _ in segments.age_bands()} if nested else {}

    def values(self, segment: Segment) -> dict[str, str]:
        """{dimension: value} a segment fixes, its product age included for an age band."""
        if segment == ("all", "all"):
            return {}
        values = dict(zip(segment[0].split(" x "), segment[1].split(" x ")))
        if values.get("age_band") in self.product_age:
            values.setdefault("product_age", self.product_age[values["age_band"]])
        return values

    def contains(self, root: Segment, segment: Segment) -> bool:
        """Whether ``segment`` lies within ``root``: it fixes every value ``root`` does (all
        traffic holds everything; ``region = DE`` holds ``region x query_band = DE x head``)."""
        return root == segment or self.values(root).items() <= self.values(segment).items()

    def overlap(self, a: Segment, b: Segment) -> bool:
        """Whether two segments can share rows: they give no dimension different values
        (``region = DE`` and ``query_band = head`` can; ``region = DE`` and ``region x
        query_band = FR x head`` cannot)."""
        values_a, values_b = self.values(a), self.values(b)
        return all(values_b[dim] == value for dim, value in values_a.items() if dim in values_b)

    def depth(self, segment: Segment) -> int:
        """How many values a segment fixes: the widest of several holding one has the fewest."""
        return len(self.values(segment))

    def common_root(self, a: Segment, b: Segment) -> Segment:
        """The smallest segment holding both: one of them, a value both fix, or all traffic."""
        if self.contains(a, b):
            return a
        if self.contains(b, a):
            return b
        shared = self.values(a).items() & self.values(b).items()
        return min(shared) if shared else ("all", "all")
