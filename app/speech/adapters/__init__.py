"""One module per speech recognizer: `whisper_local`, `openai_transcribe`, `doubao_asr`
(framing in `doubao_frames`), `dashscope_funasr`; `_ws` holds what the two WebSocket
adapters share. Each exposes a client class built by `app.speech.create_speech_client`."""
