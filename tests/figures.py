"""Checks on matplotlib figures shared by the tests."""


def assert_drawn_inside(fig):
    """Every label, legend and title of a matplotlib figure lies inside the saved image."""
    fig.canvas.draw()
    box = fig.get_tightbbox(fig.canvas.get_renderer())  # inches
    width, height = fig.get_size_inches()
    assert box.x0 >= -0.01 and box.y0 >= -0.01, box
    assert box.x1 <= width + 0.01 and box.y1 <= height + 0.01, box
