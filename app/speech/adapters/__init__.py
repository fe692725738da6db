"""One module per speech recognizer: `whisper_local`, `openai_transcribe`, `doubao_asr`
(framing in `doubao_frames`), `dashscope_funasr`; `_ws` holds what the two WebSocket
adapters share. Each exposes a `SpeechAdapter` (it only turns checked audio into
events); `app.speech.create_speech_client` puts the chosen one behind `SpeechClient`,
which enforces the contract."""
