"""The shell around the main window: the desktop pet, the tray icon, the keys, the
settings dialog and the first-run guide, for one session. Its parts are imported when
the shell is made, after the window shows."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication

from app.config import Live2DSettings, Settings, UiSettings
from app.ui.main_window import MainWindow
from app.ui.session_port import SessionPort

if TYPE_CHECKING:  # imported when first used: they are not needed to show the window
    from app.ui.first_run import FirstRunGuide
    from app.ui.hotkeys import GlobalHotkeys
    from app.ui.settings_dialog import SettingsDialog
    from app.ui.tray import CompanionTray

# What the shell keeps in `Settings.ui` itself (the settings dialog does not show them).
SHELL_OWNED_UI_FIELDS = frozenset({"window_geometry", "pet_geometry", "first_run_done"})


class Shell:
    """The main window, the desktop pet and the tray icon for one session.

    Both windows present the session's events all the time, so switching between
    them loses nothing. Without a tray, closing the window quits (and the user is
    told once); with one, closing the window keeps the app running.
    """

    def __init__(
        self,
        session: SessionPort,
        window: MainWindow,
        *,
        ui: UiSettings | None = None,
        save: Callable[[], None] | None = None,
        use_tray: bool | None = None,
        on_quit: Callable[[], None] | None = None,
        settings: Settings | None = None,
    ) -> None:
        # The shell is made once the window shows: its modules are not on that path.
        from app.ui.hotkeys import InAppShortcuts, KeyActions
        from app.ui.pet import PetWindow
        from app.ui.tray import CompanionTray, no_tray_notice, tray_available

        self.session = session
        self.window = window
        self.ui = ui if ui is not None else UiSettings()
        self._on_quit = on_quit
        self.quitting = False
        self.pet = PetWindow(session, self.ui, save=save)
        actions = self.pet.actions_menu
        actions.open_main = self.show_main
        actions.quit_app = self.quit
        actions.toggle_pet = self.toggle_pet
        self.settings = settings
        self.settings_dialog: SettingsDialog | None = None
        self.first_run_guide: FirstRunGuide | None = None
        if settings is not None:
            actions.open_settings = self.open_settings
            window.settings_requested.connect(self.open_settings)
        self.pet.open_main_requested.connect(self.show_main)
        self.pet.quit_requested.connect(self.quit)
        window.pet_requested.connect(self.show_pet)
        window.quit_requested.connect(self.quit)
        self._told: dict[str, str] = {}  # what the user was told about this platform, once
        has_tray = tray_available() if use_tray is None else use_tray
        self.tray: CompanionTray | None = None
        if has_tray:
            self.tray = CompanionTray(actions)
            self.tray.show()
            window.hide_on_close = True
        else:
            self.tell_once("tray", no_tray_notice())
        # Keys: in-app shortcuts now; the global hotkeys once the window shows.
        self.key_actions = KeyActions(session, notify=lambda text: self.tell_once("ptt", text))
        self.shortcuts = InAppShortcuts([window, self.pet], self.key_actions)
        self.hotkeys: GlobalHotkeys | None = None

    def tell_once(self, topic: str, message: str) -> None:
        """Tell the user something about this platform, once per topic (the status line
        keeps the notices told so far: a later one does not hide an earlier)."""
        if topic in self._told or not message:
            return
        self._told[topic] = message
        self.window.show_notice(message)
        if self.pet.isVisible():
            self.pet.show_notice(message)

    @property
    def told(self) -> dict[str, str]:
        """The platform notices shown so far, by topic."""
        return dict(self._told)

    def start_global_hotkeys(self) -> bool:
        """Listen for the system-wide hotkeys when the settings and the platform allow;
        otherwise say why, once. Returns whether they run."""
        if self.hotkeys is not None or not self.ui.global_hotkeys or self.quitting:
            return self.hotkeys is not None and self.hotkeys.running
        from app.ui.hotkeys import GlobalHotkeys, bindings_from

        hotkeys = GlobalHotkeys(bindings_from(self.ui), self.key_actions, self.window)
        reason = hotkeys.start()
        if reason is not None:
            self.tell_once("hotkeys", reason)
            return False
        self.hotkeys = hotkeys
        if hotkeys.invalid:
            self.tell_once(
                "hotkey-settings",
                QCoreApplication.translate(
                    "Shell",
                    "These hotkeys in the settings are not key combinations and are off: "
                    "{0}. Write them like <ctrl>+<alt>+<space>.",
                ).format(", ".join(hotkeys.invalid)),
            )
        limitation = GlobalHotkeys.limitation()
        if limitation is not None:
            self.tell_once("hotkeys", limitation)
        return hotkeys.running

    def open_settings(self) -> SettingsDialog | None:
        """Open the settings dialog (not modal: the conversation goes on meanwhile)."""
        if self.settings is None:
            return None
        from app.ui.settings_dialog import SettingsDialog

        if self.settings_dialog is not None and self.settings_dialog.isVisible():
            self.settings_dialog.raise_()
            return self.settings_dialog
        from app.ui.checks import pause_turns_during_tests

        live_mode = self.window.mode_box.currentData()  # "muted" after the mic button
        dialog = SettingsDialog(self.settings, self.window, mic_mode=live_mode)
        paused = self.window.mic.during_sound_tests(self.session.set_turns_paused)
        pause_turns_during_tests(dialog, paused)
        dialog.accepted.connect(lambda: self._settings_saved(dialog))
        if self.session.memory is not None:
            dialog.memory_button.show()
            dialog.memory_requested.connect(self.window.open_memory)
        self.settings_dialog = dialog
        dialog.open()
        return dialog

    def _settings_saved(self, dialog: SettingsDialog) -> None:
        if dialog.result_settings is None or self.settings is None:
            return
        avatar_before = self.settings.avatar
        for name in type(self.settings).model_fields:
            if name != "ui":  # the shell's own state stays the live object
                setattr(self.settings, name, getattr(dialog.result_settings, name))
        self.apply_ui(dialog.result_settings.ui)
        mode = dialog.mic_mode_chosen()
        if mode is not None:
            self.session.set_mic_mode(mode)
        self.apply_live2d(avatar_before.live2d, dialog.result_settings.avatar.live2d)
        self.window.show_notice(
            QCoreApplication.translate(
                "Shell", "Settings saved. Some changes apply when Companion restarts."
            )
        )

    def apply_ui(self, new: UiSettings) -> None:
        """Take the user's choices from edited settings into the live `ui` (the shell
        keeps its own geometry and first-run state), and apply the keys and the pet's
        click-through at once."""
        from app.ui.hotkeys import bindings_from

        keys_before = (self.ui.global_hotkeys, bindings_from(self.ui))
        click_through_before = self.ui.click_through
        for name in type(self.ui).model_fields:
            if name not in SHELL_OWNED_UI_FIELDS:
                setattr(self.ui, name, getattr(new, name))
        if self.ui.click_through != click_through_before:
            self.pet.set_click_through(self.ui.click_through, save=False)
        if (self.ui.global_hotkeys, bindings_from(self.ui)) != keys_before:
            if self.hotkeys is not None:
                self.hotkeys.stop()
                self.hotkeys = None
            for topic in ("hotkeys", "hotkey-settings"):
                self._told.pop(topic, None)  # a new choice earns a new word
            self.start_global_hotkeys()

    def apply_live2d(self, before: Live2DSettings, after: Live2DSettings) -> None:
        """Show a newly chosen Live2D model (or the sprites) in the window and the pet at
        once, or just its new scale, place and frame rate. (The chat model learns a new
        model's own expression tags when Companion restarts.)"""
        if after.folder == before.folder:
            for avatar in (self.window.avatar, self.pet.avatar):
                avatar.set_live2d_view(after)
            return
        from app.avatar.live2d_model import load_live2d_or_none
        from app.config import data_dir

        model, problems = load_live2d_or_none(after.folder, data_folder=data_dir())
        problem = self.window.avatar.set_live2d(model, after)
        self.pet.show_live2d(model, after)
        for text in [*problems, *([problem] if problem else [])]:
            self.window.show_notice(text, error=True)

    def show_initial(self) -> None:
        if self.ui.start_in_pet_mode:
            self.show_pet()
        else:
            self.show_main()
        if self.settings is not None and not self.ui.first_run_done:
            self.open_first_run()

    def open_first_run(self) -> FirstRunGuide | None:
        """The first-run guide over the main window (not modal: the loop keeps running)."""
        if self.settings is None:
            return None
        from app.ui.first_run import FirstRunGuide

        self.show_main()
        from app.ui.checks import pause_turns_during_tests

        guide = FirstRunGuide(self.settings, self.window)
        # The mic button, pill and status say "paused" while a test runs; the guide says
        # what is still loading; the listening mode it asks for applies at once.
        paused = self.window.mic.during_sound_tests(self.session.set_turns_paused)
        pause_turns_during_tests(guide, paused)
        guide.follow_status(self.window.status)
        guide.mic_mode_chosen.connect(self.window.mic.choose_mode)
        guide.accepted.connect(lambda: self.window.show_notice(guide.done_notice()))
        guide.finished.connect(lambda _result: self.window.text_input.setFocus())  # type away
        self.first_run_guide = guide
        guide.open()
        return guide

    def show_main(self) -> None:
        self.pet.hide()
        self.window.show()
        self.window.raise_()
        self.window.activateWindow()

    def show_pet(self) -> None:
        self.window.hide()
        self.pet.show()
        self.pet.raise_()
        from app.ui.pet import pet_limitation

        limitation = pet_limitation()
        if limitation is not None and "pet" not in self._told:
            self.tell_once("pet", limitation)
            if self.tray is not None:
                self.tray.showMessage("Companion", limitation)

    def toggle_pet(self) -> None:
        if self.pet.isVisible():
            self.show_main()
        else:
            self.show_pet()

    def quit(self) -> None:
        """Quit from a menu: close everything; the app then stops the session."""
        if self.quitting:
            return
        self.quitting = True
        self.stop_keys()
        self.window.hide_on_close = False
        if self.tray is not None:
            self.tray.hide()
        self.pet.close()
        self.window.close()
        if self._on_quit is not None:
            self._on_quit()

    def stop_keys(self) -> None:
        """Stop the global hotkeys and let go of a held push-to-talk."""
        if self.hotkeys is not None:
            self.hotkeys.stop()
        self.shortcuts.dispose()

    def dispose(self) -> None:
        self.stop_keys()
        if self.tray is not None:
            self.tray.dispose()
            self.tray = None
        self.pet.dispose()


__all__ = ["SHELL_OWNED_UI_FIELDS", "Shell"]
