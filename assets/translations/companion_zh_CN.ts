<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>CaptureViewer</name>
    <message>
        <source>Screenshot — {name}</source>
        <translation>截图 — {name}</translation>
    </message>
    <message>
        <source>Loading…</source>
        <translation>正在加载…</translation>
    </message>
    <message>
        <source>This screenshot is unavailable: {reason}</source>
        <translation>无法查看这张截图：{reason}</translation>
    </message>
</context>
<context>
    <name>Checks</name>
    <message>
        <source>Hello! This is how I sound when I talk to you.</source>
        <translation>你好！我跟你说话时就是这个声音。</translation>
    </message>
    <message>
        <source>Testing…</source>
        <translation>正在测试…</translation>
    </message>
    <message>
        <source>Asking the model…</source>
        <translation>正在询问模型…</translation>
    </message>
    <message>
        <source>Recording for 3 seconds: say something…</source>
        <translation>录音 3 秒：请说点什么…</translation>
    </message>
    <message>
        <source>Done: you should have heard yourself.</source>
        <translation>完成：你应该听到了自己的声音。</translation>
    </message>
    <message>
        <source>Speaking…</source>
        <translation>正在播放…</translation>
    </message>
    <message>
        <source>Microphone</source>
        <translation>麦克风</translation>
    </message>
    <message>
        <source>Speaker</source>
        <translation>扬声器</translation>
    </message>
    <message>
        <source>Embedded chat model</source>
        <translation>内置对话模型</translation>
    </message>
    <message>
        <source>Voice detection model</source>
        <translation>语音检测模型</translation>
    </message>
    <message>
        <source>Speech recognition model</source>
        <translation>语音识别模型</translation>
    </message>
    <message>
        <source>The model answered, but with no text.</source>
        <translation>模型有回应，但没有返回任何文字。</translation>
    </message>
    <message>
        <source>The microphone sent no sound at all.</source>
        <translation>麦克风完全没有传来声音。</translation>
    </message>
    <message>
        <source>a hosted service ({adapter})</source>
        <translation>在线服务（{adapter}）</translation>
    </message>
    <message>
        <source>The voice made no sound.</source>
        <translation>语音没有发出声音。</translation>
    </message>
    <message>
        <source>Fix the settings marked in red first.</source>
        <translation>请先修正标红的设置。</translation>
    </message>
    <message>
        <source>It did not answer: {error}</source>
        <translation>没有回应：{error}</translation>
    </message>
    <message>
        <source>It answered: “{answer}”</source>
        <translation>回答是：“{answer}”</translation>
    </message>
    <message>
        <source>Playing it back…</source>
        <translation>正在回放…</translation>
    </message>
    <message>
        <source>The microphone heard only silence. Is it muted, or is another one the system default?</source>
        <translation>麦克风只录到了静音。是否被静音了，或者系统默认的是另一个麦克风？</translation>
    </message>
    <message>
        <source>Done: {seconds:.1f} s of speech.</source>
        <translation>完成：共 {seconds:.1f} 秒语音。</translation>
    </message>
    <message>
        <source>This test needs the app running.</source>
        <translation>此测试需要应用正在运行。</translation>
    </message>
    <message>
        <source>The chat model file {path} is missing.</source>
        <translation>找不到对话模型文件 {path}。</translation>
    </message>
    <message>
        <source>The speech model {path} is missing.</source>
        <translation>找不到语音模型 {path}。</translation>
    </message>
    <message>
        <source>Test</source>
        <translation>测试</translation>
    </message>
    <message>
        <source>Test the model</source>
        <translation>测试模型</translation>
    </message>
    <message>
        <source>Sends one short message to the model.</source>
        <translation>向模型发送一条简短消息。</translation>
    </message>
    <message>
        <source>Test the microphone</source>
        <translation>测试麦克风</translation>
    </message>
    <message>
        <source>Records 3 seconds, then plays them back to you.</source>
        <translation>录音 3 秒，然后播放给你听。</translation>
    </message>
    <message>
        <source>Speak a sample</source>
        <translation>播放试听</translation>
    </message>
    <message>
        <source>Says a sentence with the voice chosen here.</source>
        <translation>用这里选择的声音说一句话。</translation>
    </message>
</context>
<context>
    <name>CompanionTray</name>
    <message>
        <source>This desktop has no system tray: closing the window quits Companion. The desktop pet&apos;s right-click menu has the same actions.</source>
        <translation>此桌面没有系统托盘：关闭窗口即退出 Companion。桌宠的右键菜单提供相同的操作。</translation>
    </message>
</context>
<context>
    <name>ConversationList</name>
    <message>
        <source>Conversations</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>New</source>
        <translation>新建</translation>
    </message>
    <message>
        <source>Start a new conversation (Ctrl+N)</source>
        <translation>开始新对话 (Ctrl+N)</translation>
    </message>
    <message>
        <source>Could not list the conversations: {0}</source>
        <translation>无法读取对话列表：{0}</translation>
    </message>
    <message>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <source>Conversation {0}</source>
        <translation>对话 {0}</translation>
    </message>
    <message>
        <source>start a conversation</source>
        <translation>开始新对话</translation>
    </message>
    <message>
        <source>open the conversation</source>
        <translation>打开对话</translation>
    </message>
    <message>
        <source>Could not rename the conversation: {0}</source>
        <translation>无法重命名对话：{0}</translation>
    </message>
    <message>
        <source>delete the conversation</source>
        <translation>删除对话</translation>
    </message>
    <message>
        <source>Rename conversation</source>
        <translation>重命名对话</translation>
    </message>
    <message>
        <source>Title:</source>
        <translation>标题：</translation>
    </message>
    <message>
        <source>Delete conversation?</source>
        <translation>删除对话？</translation>
    </message>
    <message>
        <source>Delete this conversation for good? This cannot be undone.</source>
        <translation>要永久删除这个对话吗？此操作无法撤销。</translation>
    </message>
    <message>
        <source>Rename…</source>
        <translation>重命名…</translation>
    </message>
    <message>
        <source>Delete…</source>
        <translation>删除…</translation>
    </message>
</context>
<context>
    <name>FirstRunGuide</name>
    <message>
        <source>Companion can look at your screen when you ask it to (“what do you think of this?”). It takes a screenshot only when the model asks for one, you always see a notice when it happens, and the picture stays on this computer unless you use a hosted model. If you prefer, it can ask you before every screenshot.</source>
        <translation>你可以让 Companion 看看你的屏幕（比如问“你觉得这个怎么样？”）。只有模型需要时它才会截图，每次截图你都会看到提示；除非你使用在线模型，否则截图只会留在这台电脑上。如果你愿意，也可以让它每次截图前先问你。</translation>
    </message>
    <message>
        <source>Welcome to Companion</source>
        <translation>欢迎使用 Companion</translation>
    </message>
    <message>
        <source>Back</source>
        <translation>上一步</translation>
    </message>
    <message>
        <source>Next</source>
        <translation>下一步</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Hi! Let&apos;s check your computer&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;你好！先来检查一下你的电脑&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>Looking for a microphone, a speaker and the models…</source>
        <translation>正在查找麦克风、扬声器和模型…</translation>
    </message>
    <message>
        <source>Try them: speak, and you will hear yourself back.</source>
        <translation>试一试：说句话，就能听到自己的回放。</translation>
    </message>
    <message>
        <source>Play a sample (speaker)</source>
        <translation>播放试听（扬声器）</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Looking at your screen&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;查看你的屏幕&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>Ask me before each screenshot</source>
        <translation>每次截图前先问我</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Who does the thinking?&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;由谁来思考？&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>The embedded model: offline, private, small</source>
        <translation>内置模型：离线、私密、小巧</translation>
    </message>
    <message>
        <source>A hosted model (needs an account and a key)</source>
        <translation>在线模型（需要账号和密钥）</translation>
    </message>
    <message>
        <source>for example gpt-4o-mini</source>
        <translation>例如 gpt-4o-mini</translation>
    </message>
    <message>
        <source>only for an OpenAI-compatible server</source>
        <translation>仅用于 OpenAI 兼容服务器</translation>
    </message>
    <message>
        <source>The key is kept in your system&apos;s keyring, not in the settings file.</source>
        <translation>密钥保存在系统钥匙串中，不会写入设置文件。</translation>
    </message>
    <message>
        <source>Provider</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>Base URL</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Checking: {name} ({n} of {total})…</source>
        <translation>正在检查：{name}（{n}/{total}）…</translation>
    </message>
    <message>
        <source>Done. Companion works without what is missing; see below.</source>
        <translation>检查完毕。缺少的部分不影响 Companion 使用，详见下方。</translation>
    </message>
    <message>
        <source>Done. Everything is in place.</source>
        <translation>检查完毕，一切就绪。</translation>
    </message>
    <message>
        <source>Start talking</source>
        <translation>开始聊天</translation>
    </message>
    <message>
        <source>Enter the model&apos;s name (as the provider spells it).</source>
        <translation>请输入模型名称（与服务商的写法保持一致）。</translation>
    </message>
    <message>
        <source>An OpenAI-compatible server needs its base URL.</source>
        <translation>OpenAI 兼容服务器需要填写 Base URL。</translation>
    </message>
    <message>
        <source>The base URL starts with http:// or https://.</source>
        <translation>Base URL 须以 http:// 或 https:// 开头。</translation>
    </message>
    <message>
        <source>Could not save the settings: {error}</source>
        <translation>无法保存设置：{error}</translation>
    </message>
</context>
<context>
    <name>Hotkeys</name>
    <message>
        <source>Global hotkeys are off: there is no X11 display to listen on. The shortcuts work while a Companion window has focus: Ctrl+Space (hold) to talk, Esc to stop, Ctrl+M to mute.</source>
        <translation>全局快捷键已关闭：没有可监听的 X11 显示。Companion 窗口处于焦点时，快捷键仍然可用：按住 Ctrl+Space 说话，Esc 停止，Ctrl+M 静音。</translation>
    </message>
    <message>
        <source>Global hotkeys are off: this Wayland desktop offers no X11 (XWayland) display to listen on. The shortcuts work while a Companion window has focus: Ctrl+Space (hold) to talk, Esc to stop, Ctrl+M to mute.</source>
        <translation>全局快捷键已关闭：此 Wayland 桌面没有可监听的 X11（XWayland）显示。Companion 窗口处于焦点时，快捷键仍然可用：按住 Ctrl+Space 说话，Esc 停止，Ctrl+M 静音。</translation>
    </message>
    <message>
        <source>Global hotkeys need Companion to be allowed under System Settings › Privacy &amp; Security › Accessibility. The in-app shortcuts still work.</source>
        <translation>要使用全局快捷键，请在“系统设置 › 隐私与安全性 › 辅助功能”中允许 Companion。应用内快捷键仍然可用。</translation>
    </message>
    <message>
        <source>On Wayland the global hotkeys reach Companion only while an X11 (XWayland) window has focus; the desktop keeps other keys private.</source>
        <translation>在 Wayland 上，只有当某个 X11（XWayland）窗口处于焦点时，全局快捷键才能传到 Companion；其他按键会被桌面环境屏蔽。</translation>
    </message>
    <message>
        <source>The push-to-talk key works when the microphone mode is “push to talk”. Switch the mode to use it.</source>
        <translation>按住说话快捷键仅在麦克风模式为“按住说话”时有效。请切换模式后再使用。</translation>
    </message>
    <message>
        <source>Global hotkeys are off (%1). The in-app shortcuts still work.</source>
        <translation>全局快捷键已关闭（%1）。应用内快捷键仍然可用。</translation>
    </message>
</context>
<context>
    <name>LevelMeter</name>
    <message>
        <source>Microphone level</source>
        <translation>麦克风音量</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <source>Always on</source>
        <translation>常开</translation>
    </message>
    <message>
        <source>Push to talk</source>
        <translation>按住说话</translation>
    </message>
    <message>
        <source>Muted</source>
        <translation>静音</translation>
    </message>
    <message>
        <source>loading the speech and chat models</source>
        <translation>正在加载语音和对话模型</translation>
    </message>
    <message>
        <source>no microphone: type your messages</source>
        <translation>没有麦克风：请输入文字</translation>
    </message>
    <message>
        <source>the microphone is gone: type your messages</source>
        <translation>麦克风已断开：请输入文字</translation>
    </message>
    <message>
        <source>interrupted</source>
        <translation>已打断</translation>
    </message>
    <message>
        <source>didn&apos;t catch that</source>
        <translation>没听清</translation>
    </message>
    <message>
        <source>Starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <source>Loading</source>
        <translation>正在加载</translation>
    </message>
    <message>
        <source>Listening</source>
        <translation>聆听中</translation>
    </message>
    <message>
        <source>Hearing you</source>
        <translation>正在听你说</translation>
    </message>
    <message>
        <source>Transcribing</source>
        <translation>正在识别</translation>
    </message>
    <message>
        <source>Thinking</source>
        <translation>思考中</translation>
    </message>
    <message>
        <source>Speaking</source>
        <translation>说话中</translation>
    </message>
    <message>
        <source>Mic off</source>
        <translation>麦克风已关闭</translation>
    </message>
    <message>
        <source>Ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>出错了</translation>
    </message>
    <message>
        <source>Send the message (Enter)</source>
        <translation>发送消息 (Enter)</translation>
    </message>
    <message>
        <source>Companion is still starting; you can send this in a moment</source>
        <translation>Companion 还在启动，稍后就能发送</translation>
    </message>
    <message>
        <source>Conversation</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>Esc stops a reply</source>
        <translation>按 Esc 可停止回复</translation>
    </message>
    <message>
        <source>How the microphone listens</source>
        <translation>麦克风的收音方式</translation>
    </message>
    <message>
        <source>Hold to talk</source>
        <translation>按住说话</translation>
    </message>
    <message>
        <source>Hold while you speak; release to send</source>
        <translation>说话时按住，松开即发送</translation>
    </message>
    <message>
        <source>Type a message…</source>
        <translation>输入消息…</translation>
    </message>
    <message>
        <source>Send</source>
        <translation>发送</translation>
    </message>
    <message>
        <source>Stop</source>
        <translation>停止</translation>
    </message>
    <message>
        <source>Stop the reply (Esc)</source>
        <translation>停止回复 (Esc)</translation>
    </message>
    <message>
        <source>● Mic live</source>
        <translation>● 正在收音</translation>
    </message>
    <message>
        <source>The microphone is on and listening</source>
        <translation>麦克风已开启，正在聆听</translation>
    </message>
    <message>
        <source>📸 Screenshot taken</source>
        <translation>📸 已截图</translation>
    </message>
    <message>
        <source>all screens</source>
        <translation>所有屏幕</translation>
    </message>
    <message>
        <source>screen {0}</source>
        <translation>屏幕 {0}</translation>
    </message>
    <message>
        <source>📸 Took a screenshot of {0} ({1}×{2}) to look at it.</source>
        <translation>📸 截取了{0}（{1}×{2}）来查看。</translation>
    </message>
    <message>
        <source>Take a screenshot?</source>
        <translation>要截图吗？</translation>
    </message>
    <message>
        <source>The companion wants to take a screenshot to look at your screen.</source>
        <translation>伙伴想截一张图，看看你的屏幕。</translation>
    </message>
    <message>
        <source>still waiting for {0} ({1} s)</source>
        <translation>仍在等待 {0}（{1} 秒）</translation>
    </message>
    <message>
        <source>No mic</source>
        <translation>无麦克风</translation>
    </message>
    <message>
        <source>Microphone unavailable: {0}</source>
        <translation>麦克风不可用：{0}</translation>
    </message>
    <message>
        <source>Microphone unavailable</source>
        <translation>麦克风不可用</translation>
    </message>
    <message>
        <source>Mic on</source>
        <translation>麦克风已开启</translation>
    </message>
    <message>
        <source>The microphone is listening. Click to mute it.</source>
        <translation>麦克风正在聆听，点击可静音。</translation>
    </message>
    <message>
        <source>The microphone is off. Click to talk.</source>
        <translation>麦克风已关闭，点击开始说话。</translation>
    </message>
    <message>
        <source>Microphone unavailable — {0}</source>
        <translation>麦克风不可用 — {0}</translation>
    </message>
    <message>
        <source>Could not show the conversation: {0}</source>
        <translation>无法显示对话：{0}</translation>
    </message>
    <message>
        <source>send the message</source>
        <translation>发送消息</translation>
    </message>
    <message>
        <source>Could not stop: {0}</source>
        <translation>无法停止：{0}</translation>
    </message>
    <message>
        <source>Could not switch the microphone: {0}</source>
        <translation>无法切换麦克风：{0}</translation>
    </message>
    <message>
        <source>Switch to desktop pet (Ctrl+P)</source>
        <translation>切换到桌宠 (Ctrl+P)</translation>
    </message>
    <message>
        <source>Settings… (Ctrl+,)</source>
        <translation>设置… (Ctrl+,)</translation>
    </message>
    <message>
        <source>Quit Companion (Ctrl+Q)</source>
        <translation>退出 Companion (Ctrl+Q)</translation>
    </message>
    <message>
        <source>Try an expression</source>
        <translation>试试表情</translation>
    </message>
    <message>
        <source>Could not {0}: the app is not running.</source>
        <translation>无法{0}：应用未在运行。</translation>
    </message>
    <message>
        <source>Could not {0}: {1}</source>
        <translation>无法{0}：{1}</translation>
    </message>
</context>
<context>
    <name>MenuActions</name>
    <message>
        <source>Open main window</source>
        <translation>打开主窗口</translation>
    </message>
    <message>
        <source>Microphone on</source>
        <translation>开启麦克风</translation>
    </message>
    <message>
        <source>Stop speaking</source>
        <translation>停止说话</translation>
    </message>
    <message>
        <source>Try an expression</source>
        <translation>试试表情</translation>
    </message>
    <message>
        <source>Quit Companion</source>
        <translation>退出 Companion</translation>
    </message>
    <message>
        <source>Show / hide desktop pet</source>
        <translation>显示/隐藏桌宠</translation>
    </message>
    <message>
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <source>Microphone mode</source>
        <translation>麦克风模式</translation>
    </message>
    <message>
        <source>Click-through pet</source>
        <translation>桌宠点击穿透</translation>
    </message>
    <message>
        <source>Always on</source>
        <translation>常开</translation>
    </message>
    <message>
        <source>Push to talk</source>
        <translation>按住说话</translation>
    </message>
    <message>
        <source>Muted</source>
        <translation>静音</translation>
    </message>
</context>
<context>
    <name>PetWindow</name>
    <message>
        <source>On this Wayland desktop the pet cannot keep itself above other windows or remember its place: the desktop decides. Install XWayland (or start with QT_QPA_PLATFORM=xcb) for a pet that stays on top.</source>
        <translation>在这个 Wayland 桌面上，桌宠无法保持在其他窗口之上，也无法记住自己的位置：这些都由桌面环境决定。安装 XWayland（或用 QT_QPA_PLATFORM=xcb 启动）即可让桌宠始终置顶。</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <source>Companion settings</source>
        <translation>Companion 设置</translation>
    </message>
    <message>
        <source>Companion looks at your screen only when the model asks for a screenshot, and you always see a notice when it does. Keys are kept in your system&apos;s keyring, never in the settings file.</source>
        <translation>只有在模型请求截图时，Companion 才会查看你的屏幕，而且每次都会提示你。密钥保存在系统钥匙串中，绝不会写入设置文件。</translation>
    </message>
    <message>
        <source>Everything else the settings file holds. Maps and lists are written as JSON.</source>
        <translation>设置文件中的其余选项。映射和列表以 JSON 格式填写。</translation>
    </message>
    <message>
        <source>Enter the model&apos;s name (as the provider spells it).</source>
        <translation>请输入模型名称（与服务商的写法保持一致）。</translation>
    </message>
    <message>
        <source>An OpenAI-compatible server needs its base URL.</source>
        <translation>OpenAI 兼容服务器需要填写 Base URL。</translation>
    </message>
    <message>
        <source>The base URL starts with http:// or https://.</source>
        <translation>Base URL 须以 http:// 或 https:// 开头。</translation>
    </message>
    <message>
        <source>Not saved. Please fix: {problems}</source>
        <translation>未保存，请先修正：{problems}</translation>
    </message>
    <message>
        <source>Could not save the settings: {error}</source>
        <translation>无法保存设置：{error}</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Voice in</source>
        <translation>语音输入</translation>
    </message>
    <message>
        <source>Voice out</source>
        <translation>语音输出</translation>
    </message>
    <message>
        <source>Avatar</source>
        <translation>形象</translation>
    </message>
    <message>
        <source>Behaviour</source>
        <translation>行为</translation>
    </message>
    <message>
        <source>Privacy</source>
        <translation>隐私</translation>
    </message>
    <message>
        <source>Advanced</source>
        <translation>高级</translation>
    </message>
    <message>
        <source>General</source>
        <translation>通用</translation>
    </message>
    <message>
        <source>Chat model</source>
        <translation>对话模型</translation>
    </message>
    <message>
        <source>Speech recognition</source>
        <translation>语音识别</translation>
    </message>
    <message>
        <source>Voice detection</source>
        <translation>语音检测</translation>
    </message>
    <message>
        <source>Sound</source>
        <translation>音频</translation>
    </message>
    <message>
        <source>Voice</source>
        <translation>声音</translation>
    </message>
    <message>
        <source>Character</source>
        <translation>角色</translation>
    </message>
    <message>
        <source>Agent</source>
        <translation>智能体</translation>
    </message>
    <message>
        <source>VTube Studio</source>
        <translation>VTube Studio</translation>
    </message>
    <message>
        <source>Desktop</source>
        <translation>桌面</translation>
    </message>
    <message>
        <source>MCP servers</source>
        <translation>MCP 服务器</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>Base URL</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>API style</source>
        <translation>API 类型</translation>
    </message>
    <message>
        <source>Microphone</source>
        <translation>麦克风</translation>
    </message>
    <message>
        <source>Speaker</source>
        <translation>扬声器</translation>
    </message>
    <message>
        <source>Microphone mode</source>
        <translation>麦克风模式</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>Rate</source>
        <translation>语速</translation>
    </message>
    <message>
        <source>Avatar pack folder</source>
        <translation>形象包文件夹</translation>
    </message>
    <message>
        <source>Screenshots</source>
        <translation>截图</translation>
    </message>
    <message>
        <source>Clipboard</source>
        <translation>剪贴板</translation>
    </message>
    <message>
        <source>Ask me before each screenshot</source>
        <translation>每次截图前先问我</translation>
    </message>
    <message>
        <source>Let the companion read the clipboard</source>
        <translation>允许伙伴读取剪贴板</translation>
    </message>
    <message>
        <source>Always on</source>
        <translation>常开</translation>
    </message>
    <message>
        <source>Push to talk</source>
        <translation>按住说话</translation>
    </message>
    <message>
        <source>Muted</source>
        <translation>静音</translation>
    </message>
    <message>
        <source> words/min</source>
        <translation> 词/分钟</translation>
    </message>
    <message>
        <source>only for an OpenAI-compatible server</source>
        <translation>仅用于 OpenAI 兼容服务器</translation>
    </message>
    <message>
        <source>the system default</source>
        <translation>系统默认</translation>
    </message>
    <message>
        <source>the engine&apos;s default voice</source>
        <translation>引擎默认声音</translation>
    </message>
    <message>
        <source>the default character</source>
        <translation>默认角色</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
    </message>
    <message>
        <source>The chat model. `model` is `provider/name`; `local/smollm2` is the embedded default.</source>
        <translation>对话模型。`model` 的格式为 `provider/name`；默认使用内置的 `local/smollm2`。</translation>
    </message>
    <message>
        <source>The chat model that answers you, as provider/name; local/smollm2 runs offline on this computer.</source>
        <translation>负责回答你的对话模型，格式为 provider/name；local/smollm2 在这台电脑上离线运行。</translation>
    </message>
    <message>
        <source>The address of the chat model&apos;s server, such as http://127.0.0.1:8080/v1; empty uses the provider&apos;s usual address.</source>
        <translation>对话模型服务器的地址，例如 http://127.0.0.1:8080/v1；留空则使用服务商的默认地址。</translation>
    </message>
    <message>
        <source>Your secret key for the chat model&apos;s provider; empty uses the provider&apos;s environment variable (such as OPENAI_API_KEY).</source>
        <translation>对话模型服务商的密钥；留空则使用该服务商的环境变量（例如 OPENAI_API_KEY）。</translation>
    </message>
    <message>
        <source>For OpenAI models only: chat uses the Chat Completions API, responses the newer Responses API.</source>
        <translation>仅适用于 OpenAI 模型：chat 使用 Chat Completions API，responses 使用较新的 Responses API。</translation>
    </message>
    <message>
        <source>Temperature</source>
        <translation>温度</translation>
    </message>
    <message>
        <source>How varied the replies are: lower is steadier, higher more playful; automatic leaves it to the model.</source>
        <translation>回复的多样性：越低越稳定，越高越活泼；选“自动”则由模型决定。</translation>
    </message>
    <message>
        <source>Max tokens</source>
        <translation>最大 token 数</translation>
    </message>
    <message>
        <source>The longest reply, in tokens (a token is about three quarters of a word); automatic leaves it to the model.</source>
        <translation>回复的最大长度，单位为 token（1 个 token 约为 3/4 个英文单词）；选“自动”则由模型决定。</translation>
    </message>
    <message>
        <source>Timeout (s)</source>
        <translation>超时（秒）</translation>
    </message>
    <message>
        <source>How long to wait for the chat model (and the vision model), in seconds, before giving up.</source>
        <translation>等待对话模型（及视觉模型）响应的最长时间，单位为秒，超时即放弃。</translation>
    </message>
    <message>
        <source>Local model path</source>
        <translation>本地模型路径</translation>
    </message>
    <message>
        <source>Offline model only: a GGUF model file to use instead of the built-in one.</source>
        <translation>仅限离线模型：用来替代内置模型的 GGUF 模型文件。</translation>
    </message>
    <message>
        <source>Local threads</source>
        <translation>本地线程数</translation>
    </message>
    <message>
        <source>Offline model only: how many processor threads it may use; automatic uses all of them.</source>
        <translation>仅限离线模型：可使用的处理器线程数；选“自动”则使用全部线程。</translation>
    </message>
    <message>
        <source>Local context</source>
        <translation>本地上下文长度</translation>
    </message>
    <message>
        <source>Offline model only: how much conversation it can keep in mind at once, in tokens.</source>
        <translation>仅限离线模型：一次能记住多少对话内容，单位为 token。</translation>
    </message>
    <message>
        <source>Speech</source>
        <translation>语音识别</translation>
    </message>
    <message>
        <source>Speech recognition. `model`/`endpoint` unset = the adapter&apos;s default (tiny.en for whisper_local). `api_key` is the speech service&apos;s own key, never the chat model&apos;s; doubao_asr also needs `app_id` (Volcengine APP ID) and may take `resource_id`.</source>
        <translation>语音识别。`model`/`endpoint` 未设置时使用适配器的默认值（whisper_local 默认为 tiny.en）。`api_key` 是语音服务自己的密钥，而不是对话模型的密钥；doubao_asr 还需要 `app_id`（火山引擎 APP ID），并可设置 `resource_id`。</translation>
    </message>
    <message>
        <source>Adapter</source>
        <translation>识别方式</translation>
    </message>
    <message>
        <source>What turns your voice into text: whisper_local works offline, the others are online services.</source>
        <translation>把你的声音转成文字的方式：whisper_local 离线运行，其他选项都是在线服务。</translation>
    </message>
    <message>
        <source>The recognition model&apos;s name; empty uses the recognizer&apos;s default (tiny.en for whisper_local).</source>
        <translation>识别模型的名称；留空则使用识别器的默认模型（whisper_local 默认为 tiny.en）。</translation>
    </message>
    <message>
        <source>Model path</source>
        <translation>模型路径</translation>
    </message>
    <message>
        <source>whisper_local only: a folder holding a faster-whisper model to use instead of the built-in one.</source>
        <translation>仅限 whisper_local：存放 faster-whisper 模型的文件夹，用来替代内置模型。</translation>
    </message>
    <message>
        <source>Language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>The language you speak, as a code such as en or zh; empty or auto detects it.</source>
        <translation>你说的语言，填写语言代码，例如 en 或 zh；留空或填 auto 则自动检测。</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>线程数</translation>
    </message>
    <message>
        <source>whisper_local only: how many processor threads recognition may use; automatic uses all of them.</source>
        <translation>仅限 whisper_local：语音识别可使用的处理器线程数；选“自动”则使用全部线程。</translation>
    </message>
    <message>
        <source>Endpoint</source>
        <translation>接口地址</translation>
    </message>
    <message>
        <source>The speech service&apos;s address; empty uses the service&apos;s usual address.</source>
        <translation>语音服务的地址；留空则使用该服务的默认地址。</translation>
    </message>
    <message>
        <source>Your secret key for the speech service (never the chat model&apos;s key).</source>
        <translation>语音服务的密钥（不是对话模型的密钥）。</translation>
    </message>
    <message>
        <source>App ID</source>
        <translation>App ID</translation>
    </message>
    <message>
        <source>doubao_asr only: your Volcengine APP ID.</source>
        <translation>仅限 doubao_asr：你的火山引擎 APP ID。</translation>
    </message>
    <message>
        <source>Resource ID</source>
        <translation>资源 ID</translation>
    </message>
    <message>
        <source>doubao_asr only: the Volcengine resource ID; empty uses volc.bigasr.sauc.duration.</source>
        <translation>仅限 doubao_asr：火山引擎资源 ID；留空则使用 volc.bigasr.sauc.duration。</translation>
    </message>
    <message>
        <source>Partial interval (s)</source>
        <translation>实时预览间隔（秒）</translation>
    </message>
    <message>
        <source>whisper_local only: seconds of new speech between live previews of your words while you talk; 0 turns the preview off.</source>
        <translation>仅限 whisper_local：说话时，每多说这么多秒就刷新一次文字实时预览；设为 0 则关闭预览。</translation>
    </message>
    <message>
        <source>How long to wait for the speech service, in seconds, before giving up.</source>
        <translation>等待语音服务响应的最长时间，单位为秒，超时即放弃。</translation>
    </message>
    <message>
        <source>Vad</source>
        <translation>语音检测</translation>
    </message>
    <message>
        <source>Voice detection: when your speech starts and when your turn is over.</source>
        <translation>语音检测：判断你何时开始说话、何时说完。</translation>
    </message>
    <message>
        <source>Start threshold</source>
        <translation>开始阈值</translation>
    </message>
    <message>
        <source>How sure the detector must be (0 to 1) that you started speaking; higher ignores more background noise.</source>
        <translation>检测器要有多大把握（0 到 1）才认定你开始说话；数值越高，越能忽略背景噪音。</translation>
    </message>
    <message>
        <source>Stop threshold</source>
        <translation>停止阈值</translation>
    </message>
    <message>
        <source>Below this certainty (0 to 1) a moment counts as a pause in your speech; keep it under the start threshold.</source>
        <translation>把握度（0 到 1）低于此值时，视为你在停顿；应低于开始阈值。</translation>
    </message>
    <message>
        <source>End silence (ms)</source>
        <translation>结束静音（毫秒）</translation>
    </message>
    <message>
        <source>Silence after speech, in milliseconds, before your turn ends.</source>
        <translation>说完话后静默多少毫秒，才算你这一轮说完。</translation>
    </message>
    <message>
        <source>Pre speech pad (ms)</source>
        <translation>语音前缓冲（毫秒）</translation>
    </message>
    <message>
        <source>Sound kept from just before your speech was noticed, in milliseconds, so the first word is not cut off.</source>
        <translation>保留检测到语音之前的一小段声音（毫秒），避免第一个字被截掉。</translation>
    </message>
    <message>
        <source>Min speech (ms)</source>
        <translation>最短语音（毫秒）</translation>
    </message>
    <message>
        <source>Sounds shorter than this, in milliseconds, are ignored as noise (a cough, a click).</source>
        <translation>短于此时长（毫秒）的声音会被当作噪音忽略（如咳嗽声、点击声）。</translation>
    </message>
    <message>
        <source>Max utterance (s)</source>
        <translation>单次发言上限（秒）</translation>
    </message>
    <message>
        <source>The longest one turn of speech can be, in seconds; longer speech is cut and sent at that point.</source>
        <translation>一轮发言的最长时间，单位为秒；超出时会在此处截断并发送。</translation>
    </message>
    <message>
        <source>Barge in (ms)</source>
        <translation>打断所需时长（毫秒）</translation>
    </message>
    <message>
        <source>How long you must speak over the companion, in milliseconds, before it stops to listen.</source>
        <translation>伙伴说话时，你需要持续说多少毫秒，伙伴才会停下来听你说。</translation>
    </message>
    <message>
        <source>Audio</source>
        <translation>音频</translation>
    </message>
    <message>
        <source>The microphone and the speaker, and how they get along while the companion talks.</source>
        <translation>麦克风和扬声器，以及伙伴说话时两者如何配合。</translation>
    </message>
    <message>
        <source>Input device</source>
        <translation>输入设备</translation>
    </message>
    <message>
        <source>The microphone, by name or number; empty uses the system default.</source>
        <translation>麦克风，填写名称或编号；留空则使用系统默认设备。</translation>
    </message>
    <message>
        <source>Output device</source>
        <translation>输出设备</translation>
    </message>
    <message>
        <source>The speaker or headphones for the companion&apos;s voice, by name or number; empty uses the system default.</source>
        <translation>播放伙伴声音的扬声器或耳机，填写名称或编号；留空则使用系统默认设备。</translation>
    </message>
    <message>
        <source>Volume</source>
        <translation>音量</translation>
    </message>
    <message>
        <source>How loud the companion&apos;s voice is: 1 is normal, 0 silent, 2 twice as loud.</source>
        <translation>伙伴说话的音量：1 为正常，0 为静音，2 为两倍音量。</translation>
    </message>
    <message>
        <source>Echo tail (ms)</source>
        <translation>回声拖尾（毫秒）</translation>
    </message>
    <message>
        <source>How long the room&apos;s echo of the companion&apos;s voice lasts, in milliseconds; the microphone ignores that echo.</source>
        <translation>伙伴的声音在房间里的回声会持续多久（毫秒）；麦克风会忽略这段回声。</translation>
    </message>
    <message>
        <source>Mic mode</source>
        <translation>麦克风模式</translation>
    </message>
    <message>
        <source>When the microphone listens: always, only while you hold the push-to-talk key or button, or never (muted).</source>
        <translation>麦克风何时收音：始终收音、仅在按住“按住说话”的按键或按钮时收音，或从不收音（静音）。</translation>
    </message>
    <message>
        <source>Barge in</source>
        <translation>允许打断</translation>
    </message>
    <message>
        <source>Let you interrupt the companion by speaking over it (needs echo cancellation and the always-on microphone mode).</source>
        <translation>伙伴说话时，你直接开口就能打断（需要回声消除，并将麦克风设为常开模式）。</translation>
    </message>
    <message>
        <source>Echo mode</source>
        <translation>回声处理</translation>
    </message>
    <message>
        <source>How the microphone avoids hearing the companion: aec cancels the echo, half_duplex ignores the mic while it speaks, auto picks aec when possible.</source>
        <translation>麦克风如何避免听到伙伴的声音：aec 消除回声，half_duplex 在伙伴说话时忽略麦克风，auto 在条件允许时自动选用 aec。</translation>
    </message>
    <message>
        <source>Resume timeout (s)</source>
        <translation>恢复等待（秒）</translation>
    </message>
    <message>
        <source>When you speak over the companion but say no words, it carries on where it stopped after this many seconds.</source>
        <translation>如果你打断了伙伴却没有说出话，伙伴会在这么多秒后从中断处接着说。</translation>
    </message>
    <message>
        <source>TTS</source>
        <translation>语音合成</translation>
    </message>
    <message>
        <source>The voice. `engine`: `pyttsx3` (the system voice), `hibari` (an offline neural voice that ships in its package) or `openai_speech` (OpenAI or any server with an OpenAI-compatible `/audio/speech`). `voice` is an id from that engine&apos;s voice list; `rate` is words per minute (175 = the engine&apos;s normal pace).</source>
        <translation>声音。`engine`：`pyttsx3`（系统语音）、`hibari`（包内自带的离线神经网络语音）或 `openai_speech`（OpenAI 或任何提供 OpenAI 兼容 `/audio/speech` 接口的服务器）。`voice` 是该引擎声音列表中的 ID；`rate` 为每分钟词数（175 为引擎的正常语速）。</translation>
    </message>
    <message>
        <source>What speaks: pyttsx3 is the system&apos;s voice, hibari an offline natural voice, openai_speech an online speech service.</source>
        <translation>由谁来发声：pyttsx3 为系统语音，hibari 为离线自然语音，openai_speech 为在线语音服务。</translation>
    </message>
    <message>
        <source>The voice&apos;s ID from the engine&apos;s list of voices; empty uses the engine&apos;s default voice.</source>
        <translation>引擎声音列表中的声音 ID；留空则使用引擎的默认声音。</translation>
    </message>
    <message>
        <source>How fast the companion speaks, in words per minute; 175 is the normal pace.</source>
        <translation>伙伴的语速，单位为每分钟词数；175 为正常语速。</translation>
    </message>
    <message>
        <source>Lookahead</source>
        <translation>预合成句数</translation>
    </message>
    <message>
        <source>How many sentences are turned into sound ahead of the one being spoken (1 to 8).</source>
        <translation>在播放当前句子的同时，提前合成几句（1 到 8）。</translation>
    </message>
    <message>
        <source>hibari only: another voice model file to use instead of the one that comes with it.</source>
        <translation>仅限 hibari：用来替代自带声音模型的其他模型文件。</translation>
    </message>
    <message>
        <source>openai_speech only: the speech server&apos;s address (it ends in /v1).</source>
        <translation>仅限 openai_speech：语音服务器的地址（以 /v1 结尾）。</translation>
    </message>
    <message>
        <source>openai_speech only: the speech model&apos;s name; empty uses gpt-4o-mini-tts.</source>
        <translation>仅限 openai_speech：语音模型名称；留空则使用 gpt-4o-mini-tts。</translation>
    </message>
    <message>
        <source>openai_speech only: your secret key for the speech server; empty uses OPENAI_API_KEY for OpenAI itself.</source>
        <translation>仅限 openai_speech：语音服务器的密钥；留空时，若使用 OpenAI 官方服务则读取 OPENAI_API_KEY。</translation>
    </message>
    <message>
        <source>Audio format</source>
        <translation>音频格式</translation>
    </message>
    <message>
        <source>openai_speech only: the sound format asked of the server; choose wav if the server cannot send raw pcm.</source>
        <translation>仅限 openai_speech：向服务器请求的音频格式；如果服务器无法发送原始 pcm，请选择 wav。</translation>
    </message>
    <message>
        <source>openai_speech only: how long to wait for the speech server, in seconds, before giving up.</source>
        <translation>仅限 openai_speech：等待语音服务器响应的最长时间，单位为秒，超时即放弃。</translation>
    </message>
    <message>
        <source>Persona</source>
        <translation>人设</translation>
    </message>
    <message>
        <source>The character. `character_file` (TOML: name, system_prompt, expressions) is the default character when unset; `name` and `system_prompt` set here override it.</source>
        <translation>角色。`character_file`（TOML：name、system_prompt、expressions）未设置时使用默认角色；在这里设置的 `name` 和 `system_prompt` 会覆盖它。</translation>
    </message>
    <message>
        <source>Name</source>
        <translation>名字</translation>
    </message>
    <message>
        <source>The companion&apos;s name; with a character file, set it only to change the file&apos;s name.</source>
        <translation>伙伴的名字；使用角色文件时，只有想改掉文件中的名字才需要填写。</translation>
    </message>
    <message>
        <source>System prompt</source>
        <translation>系统提示词</translation>
    </message>
    <message>
        <source>The instructions that give the companion its personality; empty uses the character file&apos;s ({name} becomes its name).</source>
        <translation>赋予伙伴性格的指令；留空则使用角色文件中的指令（{name} 会替换为伙伴的名字）。</translation>
    </message>
    <message>
        <source>Character file</source>
        <translation>角色文件</translation>
    </message>
    <message>
        <source>A character file (TOML with a name, instructions and expressions); empty uses the default character.</source>
        <translation>角色文件（包含名字、指令和表情的 TOML 文件）；留空则使用默认角色。</translation>
    </message>
    <message>
        <source>The agent&apos;s tool loop and how images reach the model.</source>
        <translation>智能体的工具调用，以及图片如何传给模型。</translation>
    </message>
    <message>
        <source>Enable tool</source>
        <translation>启用工具</translation>
    </message>
    <message>
        <source>Let the model use tools, such as the clock and screenshots (not with the offline model).</source>
        <translation>允许模型使用工具，例如时钟和截图（离线模型不支持）。</translation>
    </message>
    <message>
        <source>Max tool rounds</source>
        <translation>工具调用轮数上限</translation>
    </message>
    <message>
        <source>How many times in a row the model may use tools before it must answer you.</source>
        <translation>模型最多可以连续使用几次工具，之后必须回答你。</translation>
    </message>
    <message>
        <source>Tool timeout (s)</source>
        <translation>工具超时（秒）</translation>
    </message>
    <message>
        <source>The longest a built-in tool (screenshot, clock, clipboard) may run, in seconds; your own tools and MCP servers have their own limits.</source>
        <translation>内置工具（截图、时钟、剪贴板）的最长运行时间，单位为秒；自定义工具和 MCP 服务器有各自的限制。</translation>
    </message>
    <message>
        <source>Chat supports vision</source>
        <translation>对话模型支持看图</translation>
    </message>
    <message>
        <source>Whether the chat model can see images; automatic looks it up in the model list (unknown models count as text-only).</source>
        <translation>对话模型能否看图；选“自动”则在模型列表中查询（未知模型视为仅支持文字）。</translation>
    </message>
    <message>
        <source>Require detailed</source>
        <translation>要求详细描述</translation>
    </message>
    <message>
        <source>Also keep a written description of every image in the history (one extra call to the vision model per image).</source>
        <translation>同时在历史记录中保存每张图片的文字描述（每张图片会额外调用一次视觉模型）。</translation>
    </message>
    <message>
        <source>Confirm screenshots</source>
        <translation>截图前确认</translation>
    </message>
    <message>
        <source>Ask you before each screenshot the model wants to take.</source>
        <translation>模型每次想截图时，都先征求你的同意。</translation>
    </message>
    <message>
        <source>Allow clipboard</source>
        <translation>允许读取剪贴板</translation>
    </message>
    <message>
        <source>Let the model read the text you copied to the clipboard.</source>
        <translation>允许模型读取你复制到剪贴板的文字。</translation>
    </message>
    <message>
        <source>Context window</source>
        <translation>上下文窗口</translation>
    </message>
    <message>
        <source>How much conversation the chat model can read at once, in tokens; automatic looks it up in the model list.</source>
        <translation>对话模型一次能读取多少对话内容，单位为 token；选“自动”则在模型列表中查询。</translation>
    </message>
    <message>
        <source>Vision model</source>
        <translation>视觉模型</translation>
    </message>
    <message>
        <source>A model that describes images for a chat model that cannot see, as provider/name; empty: none.</source>
        <translation>为不能看图的对话模型描述图片的模型，格式为 provider/name；留空则不使用。</translation>
    </message>
    <message>
        <source>Vision base URL</source>
        <translation>视觉模型 Base URL</translation>
    </message>
    <message>
        <source>The address of the vision model&apos;s server; empty uses the provider&apos;s usual address.</source>
        <translation>视觉模型服务器的地址；留空则使用服务商的默认地址。</translation>
    </message>
    <message>
        <source>Vision API key</source>
        <translation>视觉模型 API 密钥</translation>
    </message>
    <message>
        <source>Your secret key for the vision model&apos;s provider; empty uses the provider&apos;s environment variable.</source>
        <translation>视觉模型服务商的密钥；留空则使用该服务商的环境变量。</translation>
    </message>
    <message>
        <source>Vision API style</source>
        <translation>视觉模型 API 类型</translation>
    </message>
    <message>
        <source>For OpenAI vision models only: chat uses the Chat Completions API, responses the newer Responses API.</source>
        <translation>仅适用于 OpenAI 视觉模型：chat 使用 Chat Completions API，responses 使用较新的 Responses API。</translation>
    </message>
    <message>
        <source>Tools</source>
        <translation>工具</translation>
    </message>
    <message>
        <source>Your own programs the model may run as tools, by name (each with command, description, parameters, timeout_s).</source>
        <translation>可供模型作为工具运行的自定义程序，按名称列出（每项包含 command、description、parameters、timeout_s）。</translation>
    </message>
    <message>
        <source>MCP</source>
        <translation>MCP</translation>
    </message>
    <message>
        <source>MCP servers: programs that give the model more tools.</source>
        <translation>MCP 服务器：为模型提供更多工具的程序。</translation>
    </message>
    <message>
        <source>Servers</source>
        <translation>服务器</translation>
    </message>
    <message>
        <source>MCP servers that give the model more tools, by name (each with command, args, env, cwd, timeout_s, enabled).</source>
        <translation>为模型提供更多工具的 MCP 服务器，按名称列出（每项包含 command、args、env、cwd、timeout_s、enabled）。</translation>
    </message>
    <message>
        <source>The avatar. `pack`: a sprite pack folder (frames + `avatar.toml`); unset, the default character. `renderer`: `sprite` (in the window) or `vtube_studio` (also drive a VTube Studio model). `idle_s`: back to neutral after this long without a new expression (unset: `expression_idle_s`).</source>
        <translation>形象。`pack`：形象包文件夹（帧图片 + `avatar.toml`），未设置时使用默认角色。`renderer`：`sprite`（在窗口中显示）或 `vtube_studio`（同时驱动 VTube Studio 模型）。`idle_s`：多久没有新表情后恢复平静表情（未设置时使用 `expression_idle_s`）。</translation>
    </message>
    <message>
        <source>Pack</source>
        <translation>形象包</translation>
    </message>
    <message>
        <source>A sprite pack folder (pictures plus avatar.toml); empty uses the default character.</source>
        <translation>形象包文件夹（图片和 avatar.toml）；留空则使用默认角色。</translation>
    </message>
    <message>
        <source>Renderer</source>
        <translation>显示方式</translation>
    </message>
    <message>
        <source>How the avatar is shown: sprite draws it in the window, vtube_studio also moves a VTube Studio model.</source>
        <translation>形象的显示方式：sprite 在窗口中绘制，vtube_studio 还会同时驱动 VTube Studio 模型。</translation>
    </message>
    <message>
        <source>Idle (s)</source>
        <translation>表情复原（秒）</translation>
    </message>
    <message>
        <source>Seconds without a new expression before the face goes back to neutral; automatic uses the general expression idle time.</source>
        <translation>多少秒没有新表情后，表情恢复平静；选“自动”则使用通用的表情复原时间。</translation>
    </message>
    <message>
        <source>Vtube studio</source>
        <translation>VTube Studio</translation>
    </message>
    <message>
        <source>The VTube Studio bridge: its plugin API on `host:port`, and which of the model&apos;s hotkeys (ids or names, from VTube Studio&apos;s hotkey list) shows each expression.</source>
        <translation>VTube Studio 联动：其插件 API 的地址 `host:port`，以及每个表情对应模型的哪个快捷键（ID 或名称，见 VTube Studio 的快捷键列表）。</translation>
    </message>
    <message>
        <source>Host</source>
        <translation>主机</translation>
    </message>
    <message>
        <source>The computer VTube Studio runs on; 127.0.0.1 is this computer.</source>
        <translation>运行 VTube Studio 的电脑；127.0.0.1 表示本机。</translation>
    </message>
    <message>
        <source>Port</source>
        <translation>端口</translation>
    </message>
    <message>
        <source>The port of VTube Studio&apos;s plugin API (8001 unless you changed it in VTube Studio).</source>
        <translation>VTube Studio 插件 API 的端口（默认为 8001，除非你在 VTube Studio 中改过）。</translation>
    </message>
    <message>
        <source>Hotkeys</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <source>Which VTube Studio hotkey (ID or name) shows each expression, such as {&quot;happy&quot;: &quot;Smile&quot;}.</source>
        <translation>每个表情对应的 VTube Studio 快捷键（ID 或名称），例如 {&quot;happy&quot;: &quot;Smile&quot;}。</translation>
    </message>
    <message>
        <source>Mouth parameter</source>
        <translation>嘴部参数</translation>
    </message>
    <message>
        <source>The model&apos;s parameter that opens its mouth while the companion speaks.</source>
        <translation>伙伴说话时，用来让模型张嘴的参数。</translation>
    </message>
    <message>
        <source>Plugin name</source>
        <translation>插件名称</translation>
    </message>
    <message>
        <source>The plugin name VTube Studio shows when it asks you to allow access.</source>
        <translation>VTube Studio 请求你授权访问时显示的插件名称。</translation>
    </message>
    <message>
        <source>Plugin developer</source>
        <translation>插件开发者</translation>
    </message>
    <message>
        <source>The developer name VTube Studio shows when it asks you to allow access.</source>
        <translation>VTube Studio 请求你授权访问时显示的开发者名称。</translation>
    </message>
    <message>
        <source>UI</source>
        <translation>界面</translation>
    </message>
    <message>
        <source>The desktop shell. Geometry is `[x, y, width, height]` per screen name, so the window and the pet come back where they were on each monitor.</source>
        <translation>桌面界面。位置按屏幕名称记录为 `[x, y, width, height]`，让窗口和桌宠在每台显示器上都能回到原来的位置。</translation>
    </message>
    <message>
        <source>Window geometry</source>
        <translation>窗口位置</translation>
    </message>
    <message>
        <source>Where the main window was on each screen, as [x, y, width, height].</source>
        <translation>主窗口在每个屏幕上的位置，格式为 [x, y, width, height]。</translation>
    </message>
    <message>
        <source>Pet geometry</source>
        <translation>桌宠位置</translation>
    </message>
    <message>
        <source>Where the desktop pet was on each screen, as [x, y, width, height].</source>
        <translation>桌宠在每个屏幕上的位置，格式为 [x, y, width, height]。</translation>
    </message>
    <message>
        <source>Click through</source>
        <translation>点击穿透</translation>
    </message>
    <message>
        <source>Clicks go through the desktop pet to the windows under it (its menu is then in the tray icon).</source>
        <translation>点击会穿过桌宠，落到下方的窗口上（此时桌宠的菜单在托盘图标中）。</translation>
    </message>
    <message>
        <source>Start in pet mode</source>
        <translation>以桌宠模式启动</translation>
    </message>
    <message>
        <source>Start as the desktop pet (the avatar alone on the desktop) instead of the main window.</source>
        <translation>启动时显示桌宠（桌面上只显示形象），而不是主窗口。</translation>
    </message>
    <message>
        <source>First run done</source>
        <translation>已完成首次设置</translation>
    </message>
    <message>
        <source>Whether the first-run guide has been completed.</source>
        <translation>是否已完成首次运行向导。</translation>
    </message>
    <message>
        <source>The language of the windows: auto follows the system; en is English, zh_CN Chinese.</source>
        <translation>界面语言：auto 跟随系统；en 为英文，zh_CN 为简体中文。</translation>
    </message>
    <message>
        <source>Global hotkeys</source>
        <translation>全局快捷键</translation>
    </message>
    <message>
        <source>The hotkeys below work in every program, not only in this window (on Linux this needs X11 or XWayland).</source>
        <translation>以下快捷键在所有程序中都有效，不限于本窗口（在 Linux 上需要 X11 或 XWayland）。</translation>
    </message>
    <message>
        <source>Hotkey push to talk</source>
        <translation>按住说话快捷键</translation>
    </message>
    <message>
        <source>The key combination you hold to talk, anywhere; empty turns it off.</source>
        <translation>按住即可说话的组合键，在任何地方都有效；留空则关闭。</translation>
    </message>
    <message>
        <source>Hotkey interrupt</source>
        <translation>打断快捷键</translation>
    </message>
    <message>
        <source>The key combination that makes the companion stop talking, anywhere; empty turns it off.</source>
        <translation>让伙伴停止说话的组合键，在任何地方都有效；留空则关闭。</translation>
    </message>
    <message>
        <source>Hotkey mute</source>
        <translation>静音快捷键</translation>
    </message>
    <message>
        <source>The key combination that turns the microphone off and on, anywhere; empty turns it off.</source>
        <translation>开关麦克风的组合键，在任何地方都有效；留空则关闭。</translation>
    </message>
    <message>
        <source>Expression idle (s)</source>
        <translation>表情复原（秒）</translation>
    </message>
    <message>
        <source>Seconds without a new expression before the avatar&apos;s face goes back to neutral.</source>
        <translation>多少秒没有新表情后，形象的表情恢复平静。</translation>
    </message>
    <message>
        <source>(saved — leave empty to keep it)</source>
        <translation>（已保存 — 留空则保持不变）</translation>
    </message>
    <message>
        <source>Embedded (offline, on this computer)</source>
        <translation>内置（离线，在本机运行）</translation>
    </message>
    <message>
        <source>System default</source>
        <translation>系统默认</translation>
    </message>
    <message>
        <source>Forget</source>
        <translation>清除</translation>
    </message>
    <message>
        <source>Remove the saved key</source>
        <translation>删除已保存的密钥</translation>
    </message>
    <message>
        <source>for example gpt-4o-mini</source>
        <translation>例如 gpt-4o-mini</translation>
    </message>
    <message>
        <source>Automatic</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>No</source>
        <translation>否</translation>
    </message>
    <message>
        <source>No sound devices are listed right now.</source>
        <translation>目前没有列出任何音频设备。</translation>
    </message>
    <message>
        <source>Set by the environment variable {name}, which wins over this file.</source>
        <translation>已由环境变量 {name} 设置，优先于设置文件。</translation>
    </message>
    <message>
        <source>This is not valid JSON (line {line}: {msg}).</source>
        <translation>这不是有效的 JSON（第 {line} 行：{msg}）。</translation>
    </message>
    <message>
        <source>{path} cannot be read ({error}); fix or delete it.</source>
        <translation>无法读取 {path}（{error}），请修正或删除该文件。</translation>
    </message>
</context>
<context>
    <name>Shell</name>
    <message>
        <source>These hotkeys in the settings are not key combinations and are off: {0}. Write them like &lt;ctrl&gt;+&lt;alt&gt;+&lt;space&gt;.</source>
        <translation>设置中的这些快捷键不是有效的组合键，已停用：{0}。请按 &lt;ctrl&gt;+&lt;alt&gt;+&lt;space&gt; 的格式填写。</translation>
    </message>
    <message>
        <source>Settings saved. Some changes apply when Companion restarts.</source>
        <translation>设置已保存。部分更改将在 Companion 重启后生效。</translation>
    </message>
    <message>
        <source>All set. Changes to the chat model apply when Companion restarts.</source>
        <translation>设置完成。对话模型的更改将在 Companion 重启后生效。</translation>
    </message>
    <message>
        <source>Companion could not start: {0}</source>
        <translation>Companion 无法启动：{0}</translation>
    </message>
</context>
<context>
    <name>TranscriptView</name>
    <message>
        <source>looked at your screen</source>
        <translation>看了你的屏幕</translation>
    </message>
    <message>
        <source>checked the time</source>
        <translation>看了时间</translation>
    </message>
    <message>
        <source>read the clipboard</source>
        <translation>读了剪贴板</translation>
    </message>
    <message>
        <source>Say something, or type a message below.</source>
        <translation>说点什么，或在下方输入消息。</translation>
    </message>
    <message>
        <source>You</source>
        <translation>你</translation>
    </message>
    <message>
        <source>Companion</source>
        <translation>Companion</translation>
    </message>
    <message>
        <source>Thinking…</source>
        <translation>思考中…</translation>
    </message>
    <message>
        <source>Thought for a moment</source>
        <translation>思考了片刻</translation>
    </message>
    <message>
        <source>screenshot unavailable</source>
        <translation>截图不可用</translation>
    </message>
    <message>
        <source>— interrupted</source>
        <translation>— 已打断</translation>
    </message>
    <message>
        <source>Hide the thinking</source>
        <translation>隐藏思考过程</translation>
    </message>
    <message>
        <source>Show the thinking</source>
        <translation>显示思考过程</translation>
    </message>
    <message>
        <source>Click to see it full size ({w}×{h})</source>
        <translation>点击查看原图（{w}×{h}）</translation>
    </message>
    <message>
        <source>image unavailable</source>
        <translation>图片不可用</translation>
    </message>
</context>
</TS>
