"""The `companion` subcommands, one module each (`app.cli` parses and dispatches).

common.py   failing in one line; a missing system library in words
window.py   `companion` / `companion run`: the window
turn.py     `companion turn --wav FILE`: one spoken turn from a file
avatar.py   `companion avatar snapshot|check`: the avatar to a picture; a Live2D model checked
chat.py     `companion chat --text TEXT`: one typed turn, saved to the history
one_turn.py what turn and chat share: the conversation, the session, the report
live.py     `companion turn --wav FILE --live`: the file heard in real time, every turn
"""
