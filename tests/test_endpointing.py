"""The turn detector as a state machine: frames with a speech probability in, decisions
out, with the turn model's answers and the transcripts fed back by hand. (The real
models drive it in tests/test_turn_taking.py.)"""

from __future__ import annotations

import math
from dataclasses import replace

from app.audio.format import FRAME_BYTES, FRAME_MS
from app.session.endpointing import (
    EndpointingConfig,
    EndReason,
    LikelyOver,
    Question,
    Snapshot,
    TurnBegan,
    TurnDetector,
    TurnEnd,
    TurnResumed,
)

FRAME = b"\x01\x00" * (FRAME_BYTES // 2)
CONFIG = EndpointingConfig(snapshot_interval_ms=0)


def frames_for(ms: float) -> int:
    return math.ceil(ms / FRAME_MS)


class Driver:
    """Pushes speech and silence into a detector and keeps what it decided."""

    def __init__(self, config: EndpointingConfig = CONFIG, *, turn_model: bool = True) -> None:
        self.detector = TurnDetector(config, turn_model=turn_model)
        self.actions: list[object] = []
        self.clock = 0.0

    def push(self, probability: float, ms: float) -> list[object]:
        out: list[object] = []
        for _ in range(frames_for(ms)):
            self.clock += FRAME_MS / 1000
            out += self.detector.push(FRAME, probability, self.clock)
        self.actions += out
        return out

    def speak(self, ms: float) -> list[object]:
        return self.push(0.9, ms)

    def silence(self, ms: float) -> list[object]:
        return self.push(0.02, ms)

    def of(self, kind: type) -> list[object]:
        return [a for a in self.actions if isinstance(a, kind)]

    def answer(self, probability: float) -> list[object]:
        question = self.of(Question)[-1]
        assert isinstance(question, Question)
        out = self.detector.verdict(question.speech_bytes, probability)
        self.actions += out
        return out

    def hear(self, text: str) -> list[object]:
        out = self.detector.words_came(self.detector.speech_bytes, text)
        self.actions += out
        return out


def ends(actions: list[object]) -> list[TurnEnd]:
    return [a for a in actions if isinstance(a, TurnEnd)]


def test_the_turn_ends_when_the_model_says_complete_and_the_words_sound_finished() -> None:
    d = Driver()
    assert isinstance(d.speak(800)[0], TurnBegan)
    d.silence(200)
    assert len(d.of(Question)) == 1  # asked after the first short silence
    assert d.answer(0.9) == []  # the words are not in yet: nothing is decided without them
    out = d.hear("What is the weather like today?")
    assert isinstance(out[0], LikelyOver) and out[0].text == "What is the weather like today?"
    (end,) = ends(out)
    assert end.reason is EndReason.TURN_MODEL and end.text == "What is the weather like today?"
    assert end.pcm is not None and end.speech_bytes < len(end.pcm)  # the silence is kept
    assert not d.detector.in_turn


def test_unfinished_words_keep_the_turn_open_until_the_fallback() -> None:
    d = Driver()
    d.speak(800)
    d.silence(200)
    d.hear("I want to tell you about")
    d.answer(0.95)  # the model is fooled by the intonation; the words are not
    assert ends(d.actions) == [] and d.of(LikelyOver) == []
    d.silence(CONFIG.fallback_ms - 400)
    assert ends(d.actions) == []
    d.silence(400)
    (end,) = ends(d.actions)
    assert end.reason is EndReason.FALLBACK and end.text == "I want to tell you about"


def test_speech_after_a_pause_makes_its_answers_stale_and_the_turn_goes_on() -> None:
    d = Driver()
    d.speak(600)
    d.silence(300)
    question = d.of(Question)[-1]
    d.hear("Can you help me?")
    assert d.of(LikelyOver)  # it sounded finished: a reply may have started on it
    assert isinstance(d.speak(500)[0], TurnResumed)
    # The answers about the first pause come back late: they decide nothing now.
    assert isinstance(question, Question)
    assert d.detector.verdict(question.speech_bytes, 0.99) == []
    assert d.detector.words_came(question.speech_bytes, "Can you help me?") == []
    d.silence(200)
    d.answer(0.9)
    (end,) = ends(d.hear("Can you help me with the report?"))
    assert end.text == "Can you help me with the report?" and end.reason is EndReason.TURN_MODEL


def test_finished_words_end_the_turn_after_the_settle_silence_when_the_model_is_unsure() -> None:
    d = Driver()
    d.speak(700)
    d.silence(250)
    d.answer(0.1)
    d.hear("I'd like to go to the nearest train station.")
    d.silence(CONFIG.settle_ms - 250 - 2 * FRAME_MS)
    assert ends(d.actions) == []
    d.silence(4 * FRAME_MS)
    (end,) = ends(d.actions)
    assert end.reason is EndReason.SETTLED


def test_the_model_is_asked_again_as_the_silence_grows_and_its_surest_answer_counts() -> None:
    d = Driver()
    d.speak(700)
    d.silence(200)
    d.hear("Play something relaxing, please.")
    d.answer(0.2)
    d.silence(CONFIG.recheck_ms)
    assert len(d.of(Question)) == 2
    assert ends(d.answer(0.7))[0].reason is EndReason.TURN_MODEL


def test_the_fixed_silence_mode_ends_after_the_end_silence_whatever_is_said() -> None:
    d = Driver(replace(CONFIG, mode="silence"))
    d.speak(700)
    d.silence(300)
    d.hear("I want to tell you about")
    assert d.of(Question) == []  # no turn model in this mode
    d.silence(CONFIG.vad.end_silence_ms - 300)
    (end,) = ends(d.actions)
    assert end.reason is EndReason.SILENCE


def test_without_a_turn_model_the_detector_falls_back_to_the_fixed_silence() -> None:
    d = Driver(turn_model=False)
    d.speak(700)
    d.silence(CONFIG.vad.end_silence_ms)
    assert d.of(Question) == [] and ends(d.actions)[0].reason is EndReason.SILENCE


def test_a_turn_whose_words_cannot_be_heard_ends_on_the_model_or_the_end_silence() -> None:
    d = Driver()
    d.speak(700)
    d.detector.unheard = True  # over a barge-in: the words come from the raw mic later
    d.silence(200)
    assert d.of(Snapshot) == []  # nothing is transcribed ahead
    (end,) = ends(d.answer(0.8))
    assert end.reason is EndReason.TURN_MODEL and end.text is None
    d.speak(700)
    d.detector.unheard = True
    d.silence(CONFIG.vad.end_silence_ms)
    assert ends(d.actions)[-1].reason is EndReason.SILENCE


def test_while_push_to_talk_is_held_only_its_release_ends_the_turn() -> None:
    d = Driver()
    d.speak(600)
    d.detector.push_to_talk = True
    d.silence(CONFIG.fallback_ms + 500)
    assert ends(d.actions) == [] and d.of(Question) == []
    end = d.detector.flush(EndReason.PUSH_TO_TALK)
    assert end is not None and end.reason is EndReason.PUSH_TO_TALK and end.pcm


def test_a_blip_too_short_to_be_speech_ends_without_audio() -> None:
    d = Driver(replace(CONFIG, mode="silence"))
    d.speak(CONFIG.vad.min_speech_ms - 2 * FRAME_MS)
    d.silence(CONFIG.vad.end_silence_ms)
    (end,) = ends(d.actions)
    assert end.pcm is None and end.text is None


def test_snapshots_come_at_pauses_and_every_interval_of_speech() -> None:
    d = Driver(replace(CONFIG, snapshot_interval_ms=1000))
    d.speak(2100)
    interval = [s for s in d.of(Snapshot) if isinstance(s, Snapshot) and not s.at_pause]
    assert len(interval) == 2
    d.silence(CONFIG.pause_ms)
    (pause,) = [s for s in d.of(Snapshot) if isinstance(s, Snapshot) and s.at_pause]
    assert pause.speech_bytes == d.detector.speech_bytes and len(pause.pcm) > pause.speech_bytes
    d.silence(300)
    assert len([s for s in d.of(Snapshot) if isinstance(s, Snapshot) and s.at_pause]) == 1


def test_the_longest_turn_is_cut_there() -> None:
    d = Driver(replace(CONFIG, vad=replace(CONFIG.vad, max_utterance_s=2.0)))
    d.speak(2500)
    (end,) = ends(d.actions)
    assert end.reason is EndReason.MAX_LENGTH


def test_waiting_for_is_true_only_while_an_answer_the_end_needs_is_on_its_way() -> None:
    d = Driver()
    d.speak(700)
    assert not d.detector.waiting_for  # speaking: nothing to wait for
    d.silence(CONFIG.pause_ms)
    assert d.detector.waiting_for  # the words of this pause are being transcribed
    d.hear("I want to tell you about")
    assert not d.detector.waiting_for  # unfinished: no question will be asked
    d.silence(500)
    assert not d.detector.waiting_for and len(d.of(Question)) == 0


def test_the_model_is_not_asked_again_before_the_words_are_in_nor_once_it_said_complete() -> None:
    d = Driver()
    d.speak(700)
    d.silence(200)
    d.answer(0.2)
    d.silence(3 * CONFIG.recheck_ms)  # the recognizer is slow: the model is not pestered
    assert len(d.of(Question)) == 1
    d.hear("It is going to rain this weekend.")  # finished words: ask again now
    d.silence(FRAME_MS)
    assert len(d.of(Question)) == 2
    d2 = Driver()
    d2.speak(700)
    d2.silence(200)
    d2.answer(0.9)  # complete; only the words are awaited
    d2.silence(3 * CONFIG.recheck_ms)
    assert len(d2.of(Question)) == 1



def test_late_words_are_waited_for_even_when_the_model_is_sure() -> None:
    d = Driver()
    d.speak(700)
    d.silence(200)
    d.answer(0.9)  # complete, but the recognizer is slow
    d.silence(CONFIG.settle_ms + 500)
    assert ends(d.actions) == []  # the reply needs the words anyway; they may say "go on"
    assert ends(d.hear("I want to go to the")) == []  # they came: it goes on
    d.silence(CONFIG.fallback_ms)
    assert ends(d.actions)[-1].reason is EndReason.FALLBACK


def _speak_until_an_interval_snapshot(d: Driver) -> Snapshot:
    """Speech frame by frame until an interval snapshot comes: it ends on the last
    speech frame (the user stops right there)."""
    for _ in range(frames_for(5000)):
        for action in d.speak(FRAME_MS):
            if isinstance(action, Snapshot) and not action.at_pause:
                return action
    raise AssertionError("no interval snapshot")


def test_an_interval_snapshot_dropped_on_the_last_word_is_followed_by_a_pause_snapshot() -> None:
    # the recognizer was busy and dropped it: without a pause snapshot no words ever
    # came, and the turn waited for the fallback silence (seen: 3 of 12 spoken turns)
    d = Driver(replace(CONFIG, snapshot_interval_ms=1000))
    d.speak(400)
    dropped = _speak_until_an_interval_snapshot(d)
    assert dropped.speech_bytes == d.detector.speech_bytes  # it covers the last word
    d.detector.not_transcribed(dropped)
    d.silence(CONFIG.pause_ms + FRAME_MS)
    pauses = [s for s in d.of(Snapshot) if isinstance(s, Snapshot) and s.at_pause]
    assert [p.speech_bytes for p in pauses] == [dropped.speech_bytes]


def test_an_interval_snapshot_taken_on_the_last_word_needs_no_second_one() -> None:
    d = Driver(replace(CONFIG, snapshot_interval_ms=1000))
    d.speak(400)
    _speak_until_an_interval_snapshot(d)  # being transcribed: its words will come
    d.silence(CONFIG.pause_ms + 300)
    assert not [s for s in d.of(Snapshot) if isinstance(s, Snapshot) and s.at_pause]


def unsure_then_heard(text: str) -> Driver:
    """A turn whose pause the turn model is unsure of (0.1), then its words `text`."""
    d = Driver()
    d.speak(700)
    d.silence(250)
    d.answer(0.1)
    d.hear(text)
    return d


def settled_after(text: str, settle: int) -> TurnEnd:
    """The turn `text` ends, heard with the turn model unsure: not before `settle` ms of
    silence, and just after."""
    d = unsure_then_heard(text)
    d.silence(settle - 250 - 2 * FRAME_MS)
    assert ends(d.actions) == [], text
    d.silence(4 * FRAME_MS)
    (end,) = ends(d.actions)
    return end


def test_a_finished_question_settles_sooner_than_other_finished_words() -> None:
    # A question asked hands the turn over: with the turn model unsure (espeak-ng's flat
    # voices), "What is twelve plus seven?" was answered only after the whole settle
    # silence; statements still wait for it (the speaker may go on).
    assert CONFIG.question_settle_ms < CONFIG.settle_ms
    questions = ("What is twelve plus seven?", "Do you remember my name ?", "现在几点？", "你好吗")
    statements = ("I'm a bit nervous about my job interview tomorrow.", "Thanks!", "我很好。")
    for texts, settle in ((questions, CONFIG.question_settle_ms), (statements, CONFIG.settle_ms)):
        for text in texts:
            assert settled_after(text, settle).reason is EndReason.SETTLED, text


def test_a_question_mark_after_words_that_go_on_settles_nothing() -> None:
    # The recognizer's "?" after "Can you help me with" does not make it a question asked.
    for text in ("Can you help me with?", "I want to tell you about?", "What do you think of the?"):
        d = unsure_then_heard(text)
        d.silence(CONFIG.settle_ms + 200)
        assert ends(d.actions) == [], text


def test_an_opener_waits_for_the_settle_silence_whatever_the_turn_model_says() -> None:
    # espeak-ng's "Hi! [pause] My name is Tomas ..." ended at "Hi." (the turn model said
    # complete), and the reply to "Hi." was spoken over the rest of the greeting.
    for text in ("Hi.", "Hello there!", "Okay.", "Hi?", "You know what?", "你好！"):
        d = Driver()
        d.speak(400)
        d.silence(250)
        d.hear(text)
        d.answer(0.95)
        d.silence(CONFIG.settle_ms - 250 - 2 * FRAME_MS)
        assert ends(d.actions) == [], text
        assert not d.of(TurnResumed)
        d.speak(1500)  # ... and the speaker goes on: one turn
        d.silence(250)
        d.hear(f"{text} My name is Tomas.")
        (end,) = ends(d.answer(0.95))
        assert end.reason is EndReason.TURN_MODEL and end.text == f"{text} My name is Tomas."
    # alone, it is a turn after the settle silence
    d = Driver()
    d.speak(400)
    d.silence(250)
    d.hear("Hi.")
    d.answer(0.95)
    d.silence(CONFIG.settle_ms)
    assert ends(d.actions)[0].reason is EndReason.SETTLED
    # words that say more end the turn when the model says so
    d = Driver()
    d.speak(700)
    d.silence(250)
    d.hear("Hi, my name is Tomas.")
    assert ends(d.answer(0.95))[0].reason is EndReason.TURN_MODEL



def test_a_chinese_statement_ending_on_a_question_word_is_no_question() -> None:
    from app.session.wording import sounds_asked, sounds_like_an_opener

    for text in ("我想喝点什么。", "我不知道该说什么", "我在想呢"):
        assert not sounds_asked(text, "zh"), text
    assert sounds_asked("你吃饭了吗", "zh") and sounds_asked("现在几点？", "zh")
    for text in ("You know what?", "Guess what?", "Can I ask you something?"):
        assert sounds_like_an_opener(text), text
    assert not sounds_like_an_opener("What do you know about whales?")


# Questions tiny.en wrote without a question mark (the conversation bench, English read
# in a short window: "Do you remember my name", "What was my kid and name again"), or
# with a full stop: the order of the words asks.
UNMARKED_QUESTIONS = (
    "Do you remember my name",
    "What was my kid and name again",
    "What was my kitten's name again.",
    "Can you tell me what time it is right now",
    "How much is 100 minus 35",
    "What's the time",
    "Is it going to rain tomorrow.",
    "Why does the sky look blue",
    "What time does the shop open",
    "Which one is better",
    "Whose turn is next",
    "Haven't you eaten yet",
)
# ... and statements that open with the same words, or questions still going on.
NOT_ASKED = (
    "What I want is a nap.",
    "How I wish I could go.",
    "What he said was true.",
    "When you come home we eat.",
    "What a lovely day.",
    "How nice is that!",
    "Do you remember my",
    "Can you help me with",
    "Is it",
    "I wonder what time it is.",
    "You are sure.",
    # questions that may go on after a pause: their turn is not handed over sooner
    "Do you think",
    "Did you know that my cat",
    "Is it true that my sister",
    "Could you tell me.",
    "Can you remind me to call",
    # statements a wh-word opens ("What happened is ...", "When Dad was little ...")
    "What happened is my car broke down",
    "What matters is my family",
    "What was weird was the noise",
    "What's funny is that my cat",
    "When Dad was little",
    "Where Anna was born",
    "How cool is that.",
)


def test_a_question_is_known_by_its_word_order_when_the_recognizer_left_no_mark() -> None:
    from app.session.wording import sounds_asked

    for text in UNMARKED_QUESTIONS:
        assert sounds_asked(text, "en"), text
    for text in NOT_ASKED:
        assert not sounds_asked(text, "en"), text


def test_a_question_without_its_mark_ends_the_turn_after_the_question_settle() -> None:
    for text in ("Do you remember my name", "What was my kid and name again"):
        end = settled_after(text, CONFIG.question_settle_ms)
        assert end.reason is EndReason.SETTLED and end.text == text


def test_a_goodbye_hands_the_turn_over_as_soon_as_a_question_but_thanks_alone_do_not() -> None:
    # "Thanks! [pause] Now tell me ..." may go on; a goodbye does not (the conversation
    # bench's last turn waited the whole second of the settle silence)
    for text, settle in (
        ("Thank you, that's all for now, goodbye!", CONFIG.question_settle_ms),
        ("Okay, bye for now.", CONFIG.question_settle_ms),
        ("谢谢你，再见！", CONFIG.question_settle_ms),
        ("Thank you so much!", CONFIG.settle_ms),
        ("Say goodbye to my mom for me.", CONFIG.settle_ms),
    ):
        assert settled_after(text, settle).reason is EndReason.SETTLED, text



def _turn_model_ends_after(probability: float, doubt_ms: int) -> float:
    """The silence (ms) after which the turn ends, the turn model answering each
    question with `probability` (the words are not waited for)."""
    detector = TurnDetector(EndpointingConfig(doubt_ms=doubt_ms, words=False, snapshots=False))
    speech, silence = b"\x01\x00" * 512, b"\x00\x00" * 512
    for n in range(20):
        detector.push(speech, 0.9, n * 0.032)
    for n in range(100):
        actions = detector.push(silence, 0.0, 1.0 + n * 0.032)
        for question in [a for a in actions if isinstance(a, Question)]:
            actions += detector.verdict(question.speech_bytes, probability)
        if any(isinstance(a, TurnEnd) and a.reason is EndReason.TURN_MODEL for a in actions):
            return detector.silence_ms if detector.in_turn else (n + 1) * 32.0
    return float("inf")


def test_an_unsure_complete_waits_for_more_silence_than_a_sure_one() -> None:
    assert _turn_model_ends_after(0.95, 0) == _turn_model_ends_after(0.55, 0)
    sure, unsure = _turn_model_ends_after(0.95, 600), _turn_model_ends_after(0.55, 600)
    assert sure < unsure < float("inf")
    # 0.45 against 0.05 of the 600 ms doubt: 240 ms more, to the frame
    assert abs((unsure - sure) - 240) <= 32
