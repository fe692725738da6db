"""A window showing known text, for screen tests on Xvfb:
`python -m tests.text_window TITLE TEXT [X Y W H]` shows TEXT in large type in a plain
window titled TITLE, prints "shown" once it is on screen, and stays until killed."""

from __future__ import annotations

import sys

from PySide6.QtCore import QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication, QLabel


def main(argv: list[str]) -> int:
    title, text, *place = argv
    app = QApplication([])
    label = QLabel(text)
    label.setWindowTitle(title)
    label.setFont(QFont("DejaVu Sans", 22))
    label.setStyleSheet("background: white; color: black; padding: 24px;")
    label.setWordWrap(True)
    x, y, w, h = (int(v) for v in place) if place else (40, 60, 900, 400)
    label.setGeometry(x, y, w, h)
    label.show()
    label.raise_()
    label.activateWindow()
    QTimer.singleShot(700, lambda: print("shown", flush=True))
    return app.exec()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
