"""The warnings skanchors issues, in a module of their own so that any module can raise them."""

__all__ = ["NoAnchorWarning"]


class NoAnchorWarning(UserWarning):
    """No candidate rule reached the precision threshold; the best one is returned."""
