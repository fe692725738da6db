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
        <source>{name}, installed ({size} MB)</source>
        <translation>{name}，已安装（{size} MB）</translation>
    </message>
    <message>
        <source>your own file {file} ({size} MB)</source>
        <translation>你自己的文件 {file}（{size} MB）</translation>
    </message>
    <message>
        <source>Built in: Whisper {size}, many languages</source>
        <translation>内置：Whisper {size}，多语言</translation>
    </message>
    <message>
        <source>{model}: {count} parts installed ({size} MB), joined at the first start</source>
        <translation>{model}：已安装 {count} 个分卷（{size} MB），首次启动时合并</translation>
    </message>
    <message>
        <source>{name}, installed</source>
        <translation>{name}，已安装</translation>
    </message>
    <message>
        <source>Built in: Whisper {size}, English</source>
        <translation>内置：Whisper {size}，英语</translation>
    </message>
    <message>
        <source>not used (turns end after a silence)</source>
        <translation>未使用（静默后结束你的发言）</translation>
    </message>
    <message>
        <source>an online service, {service}</source>
        <translation>在线服务：{service}</translation>
    </message>
    <message>
        <source>your own model {folder}</source>
        <translation>你自己的模型 {folder}</translation>
    </message>
    <message>
        <source>Microphone</source>
        <translation>麦克风</translation>
    </message>
    <message>
        <source>The chat model is missing: reinstall Companion, or choose a hosted model.</source>
        <translation>找不到对话模型：请重新安装 Companion，或选择在线模型。</translation>
    </message>
    <message>
        <source>Knowing when you have finished speaking: after a short pause</source>
        <translation>判断你是否说完：短暂停顿后</translation>
    </message>
    <message>
        <source>The chat model is ready (works offline)</source>
        <translation>对话模型已就绪（可离线使用）</translation>
    </message>
    <message>
        <source>Speech recognition is ready (works offline)</source>
        <translation>语音识别已就绪（可离线使用）</translation>
    </message>
    <message>
        <source>Speech recognition is missing: reinstall Companion, or type your messages</source>
        <translation>找不到语音识别：请重新安装 Companion，或打字聊天</translation>
    </message>
    <message>
        <source>Microphone: ready — try it below</source>
        <translation>麦克风：已就绪——可在下方试一试</translation>
    </message>
    <message>
        <source>Speaker: ready — play a voice below</source>
        <translation>扬声器：已就绪——可在下方试听声音</translation>
    </message>
    <message>
        <source>The chat model is here (works offline); it gets ready during this first start</source>
        <translation>对话模型已安装（可离线使用），会在这次首次启动时准备好</translation>
    </message>
    <message>
        <source>Hearing when you speak: ready</source>
        <translation>听出你在说话：已就绪</translation>
    </message>
    <message>
        <source>Knowing when you have finished speaking: ready</source>
        <translation>判断你是否说完：已就绪</translation>
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
        <source>Turn model</source>
        <translation>话轮模型</translation>
    </message>
    <message>
        <source>Speech recognition model</source>
        <translation>语音识别模型</translation>
    </message>
    <message>
        <source>Speech recognition: through an online service ({service})</source>
        <translation>语音识别：通过在线服务（{service}）</translation>
    </message>
    <message>
        <source>The chat model file you chose is missing: choose another in the settings, or a hosted model.</source>
        <translation>你选择的对话模型文件不见了：请在设置中另选一个，或选择在线模型。</translation>
    </message>
    <message>
        <source>Hearing when you speak: not possible — reinstall Companion, or type your messages</source>
        <translation>听出你在说话：无法使用——请重新安装 Companion，或打字聊天</translation>
    </message>
    <message>
        <source>The model answered, but with no words: “{answer}”.</source>
        <translation>模型回答了，但没有说出任何字：“{answer}”。</translation>
    </message>
    <message>
        <source>The model&apos;s answer holds its control text (“{answer}”): it may be run with the wrong chat template; try another model file.</source>
        <translation>模型的回答里有它的控制文本（“{answer}”）：它可能用了错误的对话模板；请换一个模型文件试试。</translation>
    </message>
    <message>
        <source>The server sent an error as the answer: “{answer}”.</source>
        <translation>服务器把一条错误当作回答发了回来：“{answer}”。</translation>
    </message>
    <message>
        <source>The model repeats itself instead of answering (“{answer}”): it may be too small or set up wrongly.</source>
        <translation>模型在重复自己而不是回答（“{answer}”）：它可能太小，或者设置有误。</translation>
    </message>
    <message>
        <source>The model only said the question back.</source>
        <translation>模型只是把问题重复了一遍。</translation>
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
    <name>DeviceWords</name>
    <message>
        <source>microphone</source>
        <translation>麦克风</translation>
    </message>
    <message>
        <source>sound output device</source>
        <translation>声音输出设备</translation>
    </message>
    <message>
        <source>No {0} was found on this computer.</source>
        <translation>这台电脑上没有找到{0}。</translation>
    </message>
    <message>
        <source>There is no default {0} (found {1}).</source>
        <translation>没有默认的{0}（找到的有：{1}）。</translation>
    </message>
    <message>
        <source>The {0} {1} was not found (found {2}).</source>
        <translation>没有找到{0} {1}（找到的有：{2}）。</translation>
    </message>
    <message>
        <source>Sound support is missing on this computer ({0}); install PortAudio (libportaudio2 on Debian and Ubuntu).</source>
        <translation>这台电脑缺少声音支持（{0}）；请安装 PortAudio（Debian 和 Ubuntu 上是 libportaudio2）。</translation>
    </message>
    <message>
        <source>Replies are shown but not heard; connect speakers or pick a device in the settings.</source>
        <translation>回复会以文字显示，但听不到声音；请连接扬声器，或在设置中选择设备。</translation>
    </message>
    <message>
        <source>Connect a microphone, or type your messages.</source>
        <translation>请连接麦克风，或者打字输入。</translation>
    </message>
    <message>
        <source>The sound output device cannot be opened ({0}).</source>
        <translation>无法打开声音输出设备（{0}）。</translation>
    </message>
    <message>
        <source>The sound output stopped working: the device may have been unplugged, or the sound system stopped ({0}).</source>
        <translation>声音输出停止工作了：设备可能被拔掉了，或者声音系统停止了（{0}）。</translation>
    </message>
</context>
<context>
    <name>FirstRunGuide</name>
    <message>
        <source>Companion can look at your screen when you ask it to (“what do you think of this?”). It takes a screenshot only when you ask about your screen or the model asks for one, you always see a notice when it happens, and the picture stays on this computer unless you use a hosted model. If you prefer, it can ask you before every screenshot.</source>
        <translation>你让 Companion 看屏幕时，它就能看（“你觉得这个怎么样？”）。只有在你问到屏幕上的内容或模型请求截图时，它才会截图；每次截图你都会看到提示，而且除非你使用在线模型，图片只保存在这台电脑上。如果你愿意，它也可以在每次截图前先问你。</translation>
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
        <source>Pick the companion&apos;s voice (play both to compare):</source>
        <translation>选择伙伴的声音（两个都试听一下再比较）：</translation>
    </message>
    <message>
        <source>Natural voice: offline, for English (other languages use the system voice)</source>
        <translation>自然语音：离线，用于英语（其他语言使用系统语音）</translation>
    </message>
    <message>
        <source>System voice: the computer&apos;s own speech</source>
        <translation>系统语音：电脑自带的语音合成</translation>
    </message>
    <message>
        <source>Play the natural voice</source>
        <translation>试听自然语音</translation>
    </message>
    <message>
        <source>Play the system voice</source>
        <translation>试听系统语音</translation>
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
        <source>An embedded model: offline and private</source>
        <translation>内置模型：离线、私密</translation>
    </message>
    <message>
        <source>A hosted model (needs an account and a key)</source>
        <translation>在线模型（需要账号和密钥）</translation>
    </message>
    <message>
        <source>These are for a hosted model only: choose “A hosted model” above to fill them in. The embedded model needs no name, address or key.</source>
        <translation>这些只用于在线模型：在上面选择“在线模型”后才能填写。内置模型不需要名称、地址或密钥。</translation>
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
        <source>Provider</source>
        <translation>服务商</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>服务器地址</translation>
    </message>
    <message>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <source>Checking your computer ({n} of {total})…</source>
        <translation>正在检查你的电脑（第 {n} 项，共 {total} 项）…</translation>
    </message>
    <message>
        <source>starting</source>
        <translation>正在启动</translation>
    </message>
    <message>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <source>What each check found: devices, models, sizes</source>
        <translation>每项检查发现的内容：设备、模型、大小</translation>
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
        <source>Choose one to go on. You can change it any time beside the microphone button.</source>
        <translation>请选择一种方式再继续。之后随时可以在麦克风按钮旁更改。</translation>
    </message>
    <message>
        <source>Checks done: Companion works without what is missing (see below).</source>
        <translation>检查完毕：缺少的部分不影响 Companion 使用（详见下方）。</translation>
    </message>
    <message>
        <source>Checks done: everything is in place.</source>
        <translation>检查完毕：一切齐全。</translation>
    </message>
    <message>
        <source>Done. Companion works without what is missing; see below.</source>
        <translation>检查完毕。缺少的部分不影响 Companion 使用，详见下方。</translation>
    </message>
    <message>
        <source>Hide details</source>
        <translation>隐藏详细信息</translation>
    </message>
    <message>
        <source>&lt;h3&gt;How should the companion listen?&lt;/h3&gt;</source>
        <translation>&lt;h3&gt;伙伴该怎样听你说话？&lt;/h3&gt;</translation>
    </message>
    <message>
        <source>Just talk. Without headphones it may hear its own voice.</source>
        <translation>直接说话即可。不戴耳机时，它可能会听到自己的声音。</translation>
    </message>
    <message>
        <source>Hold Ctrl+Space (or the “Hold to talk” button) while you speak. It never hears itself.</source>
        <translation>说话时按住 Ctrl+空格（或“按住说话”按钮）。它永远不会听到自己的声音。</translation>
    </message>
    <message>
        <source>{checked} Still getting ready — {what}. You can go on meanwhile.</source>
        <translation>{checked}仍在准备——{what}。你可以先继续。</translation>
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
        <translation>OpenAI 兼容服务器需要填写服务器地址。</translation>
    </message>
    <message>
        <source>The base URL starts with http:// or https://.</source>
        <translation>服务器地址须以 http:// 或 https:// 开头。</translation>
    </message>
    <message>
        <source>Could not save the settings: {error}</source>
        <translation>无法保存设置：{error}</translation>
    </message>
    <message>
        <source>All set. The new chat model is used when Companion restarts.</source>
        <translation>全部就绪。新的对话模型会在 Companion 重新启动后使用。</translation>
    </message>
    <message>
        <source>All set. Companion is still getting ready (see the line above); then say hello, or type to the companion below.</source>
        <translation>全部就绪。Companion 仍在准备（见上面一行）；准备好后打个招呼，或者在下面打字和伙伴聊天吧。</translation>
    </message>
    <message>
        <source>All set. Say hello, or type to the companion below.</source>
        <translation>全部就绪。打个招呼，或者在下面打字和伙伴聊天吧。</translation>
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
    <name>Live2DPreview</name>
    <message>
        <source>Preview</source>
        <translation>预览</translation>
    </message>
    <message>
        <source>Reading the model…</source>
        <translation>正在读取模型…</translation>
    </message>
    <message>
        <source>(no folder could be written)</source>
        <translation>（没有可写入的文件夹）</translation>
    </message>
    <message>
        <source>{name}: the expression tags {tags}. Edit them in {file}.</source>
        <translation>{name}：表情标签 {tags}。可在 {file} 中编辑。</translation>
    </message>
    <message>
        <source>The built-in avatar.</source>
        <translation>内置形象。</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
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
        <source>💭 Memory</source>
        <translation>💭 记忆</translation>
    </message>
    <message>
        <source>What the companion remembers about you</source>
        <translation>伙伴记得的关于你的事</translation>
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
        <source>Take a screenshot?</source>
        <translation>要截图吗？</translation>
    </message>
    <message>
        <source>The companion wants to take a screenshot to look at your screen.</source>
        <translation>伙伴想截一张图，看看你的屏幕。</translation>
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
        <source>Switch to desktop pet (Ctrl+P)</source>
        <translation>切换到桌宠 (Ctrl+P)</translation>
    </message>
    <message>
        <source>Settings… (Ctrl+,)</source>
        <translation>设置… (Ctrl+,)</translation>
    </message>
    <message>
        <source>Memory…</source>
        <translation>记忆…</translation>
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
    <name>MemoryNotice</name>
    <message>
        <source>💭 Remembered: {0}</source>
        <translation>💭 记住了：{0}</translation>
    </message>
    <message>
        <source>💭 Updated: {0}</source>
        <translation>💭 更新了：{0}</translation>
    </message>
    <message>
        <source>💭 Forgot: {0}</source>
        <translation>💭 忘掉了：{0}</translation>
    </message>
    <message>
        <source>💭 Undone</source>
        <translation>💭 已撤销</translation>
    </message>
    <message>
        <source>Click to undo</source>
        <translation>点击撤销</translation>
    </message>
</context>
<context>
    <name>MemoryPage</name>
    <message>
        <source>Memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>What {0} remembers about you</source>
        <translation>{0} 记得的关于你的事</translation>
    </message>
    <message>
        <source>Kept on this computer, in the data folder; only the chat model you chose reads it. In a conversation, say “remember that …”, “forget …” or “what do you remember about me?”. Double-click a memory to change it.</source>
        <translation>保存在这台电脑的数据文件夹里，只有你选择的聊天模型会读取。在对话中可以说“记住……”、“忘掉……”或“你记得我什么？”。双击一条记忆即可修改。</translation>
    </message>
    <message>
        <source>Memory is off: nothing new is remembered or recalled. Turn it on in Settings → Privacy.</source>
        <translation>记忆已关闭：不会记住新内容，也不会回忆旧内容。可在“设置 → 隐私”中开启。</translation>
    </message>
    <message>
        <source>Search memories…</source>
        <translation>搜索记忆…</translation>
    </message>
    <message>
        <source>Edit</source>
        <translation>编辑</translation>
    </message>
    <message>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>Export…</source>
        <translation>导出…</translation>
    </message>
    <message>
        <source>Import…</source>
        <translation>导入…</translation>
    </message>
    <message>
        <source>Forget everything…</source>
        <translation>全部忘掉…</translation>
    </message>
    <message>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>{kind} · remembered {day} · recalled {count} times</source>
        <translation>{kind} · 记于 {day} · 回忆过 {count} 次</translation>
    </message>
    <message>
        <source>{0} of {1} memories</source>
        <translation>{1} 条记忆中的 {0} 条</translation>
    </message>
    <message>
        <source>{0} memories</source>
        <translation>{0} 条记忆</translation>
    </message>
    <message>
        <source>A memory needs some words; use Delete to remove it.</source>
        <translation>记忆不能为空；要去掉它请用“删除”。</translation>
    </message>
    <message>
        <source>Forget everything?</source>
        <translation>全部忘掉？</translation>
    </message>
    <message>
        <source>Erase all {0} memories? This cannot be undone.</source>
        <translation>要抹去全部 {0} 条记忆吗？此操作无法撤销。</translation>
    </message>
    <message>
        <source>Export memories</source>
        <translation>导出记忆</translation>
    </message>
    <message>
        <source>Import memories</source>
        <translation>导入记忆</translation>
    </message>
    <message>
        <source>Memory files (*.json)</source>
        <translation>记忆文件 (*.json)</translation>
    </message>
    <message>
        <source>Exported {0} memories to {1}</source>
        <translation>已导出 {0} 条记忆到 {1}</translation>
    </message>
    <message>
        <source>Imported {0} new memories from {1}</source>
        <translation>已从 {1} 导入 {0} 条新记忆</translation>
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
    <name>MicControls</name>
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
        <source>Mic off</source>
        <translation>麦克风已关闭</translation>
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
        <source>No mic</source>
        <translation>无麦克风</translation>
    </message>
    <message>
        <source>Microphone unavailable</source>
        <translation>麦克风不可用</translation>
    </message>
    <message>
        <source>Mic paused</source>
        <translation>麦克风已暂停</translation>
    </message>
    <message>
        <source>A sound test is running: the companion does not listen until it ends.</source>
        <translation>正在进行声音测试：测试结束前伙伴不会收听。</translation>
    </message>
    <message>
        <source>Mic ready</source>
        <translation>麦克风待命</translation>
    </message>
    <message>
        <source>Push to talk: the companion hears you only while you hold the button or the key. Click to mute the microphone.</source>
        <translation>按住说话：只有在你按住按钮或按键时伙伴才会听到你。点击可关闭麦克风。</translation>
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
        <source>Mic on</source>
        <translation>麦克风已开启</translation>
    </message>
    <message>
        <source>Microphone unavailable: {0}</source>
        <translation>麦克风不可用：{0}</translation>
    </message>
    <message>
        <source>Could not switch the microphone: {0}</source>
        <translation>无法切换麦克风：{0}</translation>
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
        <source>Companion looks at your screen only when you ask about it or the model asks for a screenshot, and you always see a notice when it does.</source>
        <translation>只有在你问到屏幕、或模型请求截图时，伙伴才会查看你的屏幕，而且每次都会有提示。</translation>
    </message>
    <message>
        <source>Open the Memory page…</source>
        <translation>打开记忆页面…</translation>
    </message>
    <message>
        <source>See, edit, export or erase what the companion remembers about you</source>
        <translation>查看、编辑、导出或抹去伙伴记得的关于你的事</translation>
    </message>
    <message>
        <source>Fine tuning and everything else the settings file holds. The usual values suit most people.</source>
        <translation>细节调整，以及设置文件里的其他所有内容。默认值适合大多数人。</translation>
    </message>
    <message>
        <source>Enter the model&apos;s name (as the provider spells it).</source>
        <translation>请输入模型名称（与服务商的写法保持一致）。</translation>
    </message>
    <message>
        <source>An OpenAI-compatible server needs its base URL.</source>
        <translation>OpenAI 兼容服务器需要填写服务器地址。</translation>
    </message>
    <message>
        <source>The base URL starts with http:// or https://.</source>
        <translation>服务器地址须以 http:// 或 https:// 开头。</translation>
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
        <source>Turn-taking</source>
        <translation>轮流对话</translation>
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
        <source>Live2D model</source>
        <translation>Live2D 模型</translation>
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
        <source>Memory</source>
        <translation>记忆</translation>
    </message>
    <message>
        <source>Base URL</source>
        <translation>服务器地址</translation>
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
        <source>How your turn ends</source>
        <translation>你的发言如何结束</translation>
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
        <source>Your own embedded model file</source>
        <translation>自选的内置模型文件</translation>
    </message>
    <message>
        <source>Embedded model&apos;s processor threads</source>
        <translation>内置模型的处理器线程数</translation>
    </message>
    <message>
        <source>Embedded model&apos;s memory span</source>
        <translation>内置模型能记住的对话长度</translation>
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
        <source>Long-term memory</source>
        <translation>长期记忆</translation>
    </message>
    <message>
        <source>Learning</source>
        <translation>学习</translation>
    </message>
    <message>
        <source>Memory read per reply</source>
        <translation>每次回复读取的记忆</translation>
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
        <source>The eyes follow the mouse pointer</source>
        <translation>眼睛跟随鼠标指针</translation>
    </message>
    <message>
        <source>Remember me from one conversation to the next</source>
        <translation>在不同对话之间记住我</translation>
    </message>
    <message>
        <source>Learn what to remember from what I say</source>
        <translation>从我说的话里学习要记住什么</translation>
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
        <source> fps</source>
        <translation> 帧/秒</translation>
    </message>
    <message>
        <source> tokens</source>
        <translation> 个词元</translation>
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
        <source>the folder with your model&apos;s .model3.json file</source>
        <translation>包含模型 .model3.json 文件的文件夹</translation>
    </message>
    <message>
        <source>Built-in</source>
        <translation>内置</translation>
    </message>
    <message>
        <source>Live2D model…</source>
        <translation>Live2D 模型…</translation>
    </message>
    <message>
        <source>Choose the folder of your Live2D model</source>
        <translation>选择你的 Live2D 模型所在的文件夹</translation>
    </message>
    <message>
        <source>Choose the folder of an avatar pack</source>
        <translation>选择形象包所在的文件夹</translation>
    </message>
    <message>
        <source>Programs that give the model more tools (MCP servers), each under a name of your choice.</source>
        <translation>给模型提供更多工具的程序（MCP 服务器），每个用你起的名字命名。</translation>
    </message>
    <message>
        <source>The program that starts the server, with its arguments, on one line as you would type it in a terminal.</source>
        <translation>启动服务器的程序及其参数，写成一行，就像在终端里输入的那样。</translation>
    </message>
    <message>
        <source>Chat</source>
        <translation>对话</translation>
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
        <source>Max tokens</source>
        <translation>最大 token 数</translation>
    </message>
    <message>
        <source>Timeout (s)</source>
        <translation>超时（秒）</translation>
    </message>
    <message>
        <source>Amazon Bedrock only: the AWS region to use, such as us-east-1; empty uses AWS_REGION or the AWS profile&apos;s region.</source>
        <translation>仅用于 Amazon Bedrock：要使用的 AWS 区域，例如 us-east-1；留空则使用 AWS_REGION 或 AWS 配置文件中的区域。</translation>
    </message>
    <message>
        <source>Amazon Bedrock only: the AWS profile whose credentials sign the requests (from ~/.aws); empty uses AWS_PROFILE or the default credentials.</source>
        <translation>仅用于 Amazon Bedrock：用其凭证为请求签名的 AWS 配置（来自 ~/.aws）；留空则使用 AWS_PROFILE 或默认凭证。</translation>
    </message>
    <message>
        <source>Local model path</source>
        <translation>本地模型路径</translation>
    </message>
    <message>
        <source>Local threads</source>
        <translation>本地线程数</translation>
    </message>
    <message>
        <source>Local context</source>
        <translation>本地上下文长度</translation>
    </message>
    <message>
        <source>Speech</source>
        <translation>语音识别</translation>
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
        <source>Server address</source>
        <translation>服务器地址</translation>
    </message>
    <message>
        <source>Key over plain http://</source>
        <translation>通过明文 http:// 发送密钥</translation>
    </message>
    <message>
        <source>OpenAI interface</source>
        <translation>OpenAI 接口</translation>
    </message>
    <message>
        <source>Creativity</source>
        <translation>创意程度</translation>
    </message>
    <message>
        <source>Longest reply</source>
        <translation>最长回复</translation>
    </message>
    <message>
        <source>Wait for an answer</source>
        <translation>等待回答的时间</translation>
    </message>
    <message>
        <source>Amazon Bedrock region</source>
        <translation>Amazon Bedrock 区域</translation>
    </message>
    <message>
        <source>Amazon Bedrock profile</source>
        <translation>Amazon Bedrock 配置</translation>
    </message>
    <message>
        <source>Embedded model on the graphics card</source>
        <translation>内置模型使用显卡</translation>
    </message>
    <message>
        <source>Recognition model</source>
        <translation>识别模型</translation>
    </message>
    <message>
        <source>Own recognition model folder</source>
        <translation>自己的识别模型文件夹</translation>
    </message>
    <message>
        <source>Language you speak</source>
        <translation>你说的语言</translation>
    </message>
    <message>
        <source>Recognition&apos;s processor threads</source>
        <translation>识别使用的处理器线程数</translation>
    </message>
    <message>
        <source>Speech service address</source>
        <translation>语音服务地址</translation>
    </message>
    <message>
        <source>Speech service key</source>
        <translation>语音服务密钥</translation>
    </message>
    <message>
        <source>Volcengine app ID</source>
        <translation>火山引擎应用 ID</translation>
    </message>
    <message>
        <source>Volcengine resource ID</source>
        <translation>火山引擎资源 ID</translation>
    </message>
    <message>
        <source>Live preview of your words every</source>
        <translation>实时预览你说的话，每隔</translation>
    </message>
    <message>
        <source>Wait for the speech service</source>
        <translation>等待语音服务的时间</translation>
    </message>
    <message>
        <source>Sureness that you started speaking</source>
        <translation>判断你开始说话的把握</translation>
    </message>
    <message>
        <source>Sureness that you paused</source>
        <translation>判断你停顿的把握</translation>
    </message>
    <message>
        <source>Silence that ends your turn</source>
        <translation>结束你发言的静音时长</translation>
    </message>
    <message>
        <source>Sound kept from before you spoke</source>
        <translation>保留你开口之前的声音</translation>
    </message>
    <message>
        <source>Shortest sound that counts as speech</source>
        <translation>算作说话的最短声音</translation>
    </message>
    <message>
        <source>Longest turn of speech</source>
        <translation>一次发言的最长时间</translation>
    </message>
    <message>
        <source>Speaking needed to interrupt</source>
        <translation>打断所需的说话时长</translation>
    </message>
    <message>
        <source>First look after you stop</source>
        <translation>你停下后第一次判断</translation>
    </message>
    <message>
        <source>Look again after</source>
        <translation>再次判断间隔</translation>
    </message>
    <message>
        <source>Sureness that you are done</source>
        <translation>判断你说完的把握</translation>
    </message>
    <message>
        <source>Wait longer when unsure</source>
        <translation>不确定时多等一会儿</translation>
    </message>
    <message>
        <source>Silence after a finished sentence</source>
        <translation>说完一句话后的静音</translation>
    </message>
    <message>
        <source>Silence after a finished question</source>
        <translation>问题说完后的静默</translation>
    </message>
    <message>
        <source>Longest silence before replying</source>
        <translation>回复前的最长静音</translation>
    </message>
    <message>
        <source>Your words while you speak</source>
        <translation>说话时显示你的话</translation>
    </message>
    <message>
        <source>Pause that shows your words</source>
        <translation>显示你的话所需的停顿</translation>
    </message>
    <message>
        <source>Start answering early</source>
        <translation>提前开始回答</translation>
    </message>
    <message>
        <source>Going on after a pause</source>
        <translation>停顿后接着说</translation>
    </message>
    <message>
        <source>Speaking needed to go on</source>
        <translation>接着说所需的说话时长</translation>
    </message>
    <message>
        <source>Room echo lasts</source>
        <translation>房间回声持续</translation>
    </message>
    <message>
        <source>Interrupting</source>
        <translation>打断</translation>
    </message>
    <message>
        <source>Keeping its own voice out of the microphone</source>
        <translation>不让麦克风听到它自己的声音</translation>
    </message>
    <message>
        <source>Carry on after a false interruption</source>
        <translation>误打断后继续说</translation>
    </message>
    <message>
        <source>Voice name</source>
        <translation>声音名称</translation>
    </message>
    <message>
        <source>Speaking speed</source>
        <translation>语速</translation>
    </message>
    <message>
        <source>Sentences prepared ahead</source>
        <translation>提前准备的句子数</translation>
    </message>
    <message>
        <source>Own natural-voice model file</source>
        <translation>自己的自然语音模型文件</translation>
    </message>
    <message>
        <source>Speech server address</source>
        <translation>语音服务器地址</translation>
    </message>
    <message>
        <source>Speech server model</source>
        <translation>语音服务器模型</translation>
    </message>
    <message>
        <source>Speech server key</source>
        <translation>语音服务器密钥</translation>
    </message>
    <message>
        <source>Sound format from the server</source>
        <translation>服务器发送的声音格式</translation>
    </message>
    <message>
        <source>Wait for the speech server</source>
        <translation>等待语音服务器的时间</translation>
    </message>
    <message>
        <source>Personality</source>
        <translation>性格</translation>
    </message>
    <message>
        <source>Most sentences in a reply</source>
        <translation>一次回复最多几句话</translation>
    </message>
    <message>
        <source>Tool uses before answering</source>
        <translation>回答前最多使用工具次数</translation>
    </message>
    <message>
        <source>Tools used at once</source>
        <translation>一次最多使用的工具数</translation>
    </message>
    <message>
        <source>Tools used for one message</source>
        <translation>回答一条消息最多使用的工具数</translation>
    </message>
    <message>
        <source>Longest a tool may take</source>
        <translation>工具最长运行时间</translation>
    </message>
    <message>
        <source>The model can see pictures</source>
        <translation>模型能看图片</translation>
    </message>
    <message>
        <source>Picture descriptions</source>
        <translation>图片描述</translation>
    </message>
    <message>
        <source>Conversation the model can read</source>
        <translation>模型能读到的对话长度</translation>
    </message>
    <message>
        <source>Model that describes pictures</source>
        <translation>描述图片的模型</translation>
    </message>
    <message>
        <source>Its server address</source>
        <translation>它的服务器地址</translation>
    </message>
    <message>
        <source>Its API key</source>
        <translation>它的 API 密钥</translation>
    </message>
    <message>
        <source>Its OpenAI interface</source>
        <translation>它的 OpenAI 接口</translation>
    </message>
    <message>
        <source>Your own tools</source>
        <translation>你自己的工具</translation>
    </message>
    <message>
        <source>Tool servers (MCP)</source>
        <translation>工具服务器（MCP）</translation>
    </message>
    <message>
        <source>Program</source>
        <translation>程序</translation>
    </message>
    <message>
        <source>More arguments</source>
        <translation>更多参数</translation>
    </message>
    <message>
        <source>Environment variables</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>Folder it runs in</source>
        <translation>运行所在的文件夹</translation>
    </message>
    <message>
        <source>Wait for each answer</source>
        <translation>等待每次回答的时间</translation>
    </message>
    <message>
        <source>Use it</source>
        <translation>使用</translation>
    </message>
    <message>
        <source>Where the avatar moves</source>
        <translation>形象在哪里动</translation>
    </message>
    <message>
        <source>Back to a calm face after</source>
        <translation>多久后恢复平静表情</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Left or right</source>
        <translation>左右位置</translation>
    </message>
    <message>
        <source>Up or down</source>
        <translation>上下位置</translation>
    </message>
    <message>
        <source>Eyes</source>
        <translation>眼睛</translation>
    </message>
    <message>
        <source>Smoothness</source>
        <translation>流畅度</translation>
    </message>
    <message>
        <source>Computer running VTube Studio</source>
        <translation>运行 VTube Studio 的电脑</translation>
    </message>
    <message>
        <source>VTube Studio plugin port</source>
        <translation>VTube Studio 插件端口</translation>
    </message>
    <message>
        <source>Hotkey for each expression</source>
        <translation>每个表情对应的快捷键</translation>
    </message>
    <message>
        <source>Plugin name shown</source>
        <translation>显示的插件名称</translation>
    </message>
    <message>
        <source>Plugin developer shown</source>
        <translation>显示的插件开发者</translation>
    </message>
    <message>
        <source>Clicks</source>
        <translation>点击</translation>
    </message>
    <message>
        <source>Start as</source>
        <translation>启动方式</translation>
    </message>
    <message>
        <source>Hold to talk</source>
        <translation>按住说话</translation>
    </message>
    <message>
        <source>Stop talking</source>
        <translation>停止说话</translation>
    </message>
    <message>
        <source>Microphone off and on</source>
        <translation>关闭和打开麦克风</translation>
    </message>
    <message>
        <source>Calm face after</source>
        <translation>恢复平静表情的时间</translation>
    </message>
    <message>
        <source>Let the model use tools (the clock, screenshots)</source>
        <translation>允许模型使用工具（时钟、截图）</translation>
    </message>
    <message>
        <source>Keep a written description of every picture</source>
        <translation>为每张图片保存一段文字描述</translation>
    </message>
    <message>
        <source>Let me interrupt by speaking</source>
        <translation>允许我通过说话打断它</translation>
    </message>
    <message>
        <source>Show my words while I speak</source>
        <translation>我说话时显示我说的话</translation>
    </message>
    <message>
        <source>Clicks go through the desktop pet</source>
        <translation>点击穿过桌面宠物</translation>
    </message>
    <message>
        <source>Start as the desktop pet</source>
        <translation>以桌面宠物方式启动</translation>
    </message>
    <message>
        <source>The hotkeys work in every program</source>
        <translation>快捷键在所有程序中都有效</translation>
    </message>
    <message>
        <source>Start this server with Companion</source>
        <translation>随 Companion 启动这个服务器</translation>
    </message>
    <message>
        <source>Automatic (when llama.cpp can use it)</source>
        <translation>自动（llama.cpp 能用显卡时）</translation>
    </message>
    <message>
        <source>Never (always the processor)</source>
        <translation>从不（始终使用处理器）</translation>
    </message>
    <message>
        <source>Chat Completions (works everywhere)</source>
        <translation>Chat Completions（到处都能用）</translation>
    </message>
    <message>
        <source>Responses (newer, OpenAI only)</source>
        <translation>Responses（较新，仅限 OpenAI）</translation>
    </message>
    <message>
        <source>Built-in (Whisper tiny, English)</source>
        <translation>内置（Whisper tiny，英语）</translation>
    </message>
    <message>
        <source>OpenAI (online)</source>
        <translation>OpenAI（在线）</translation>
    </message>
    <message>
        <source>Doubao by Volcengine (online)</source>
        <translation>火山引擎豆包（在线）</translation>
    </message>
    <message>
        <source>FunASR by Alibaba DashScope (online)</source>
        <translation>阿里云百炼 FunASR（在线）</translation>
    </message>
    <message>
        <source>Automatic (cancel the echo when possible)</source>
        <translation>自动（尽可能消除回声）</translation>
    </message>
    <message>
        <source>Cancel the echo (speakers)</source>
        <translation>消除回声（外放音箱）</translation>
    </message>
    <message>
        <source>Stop listening while it speaks</source>
        <translation>它说话时不听</translation>
    </message>
    <message>
        <source>Listen to how I finish a sentence</source>
        <translation>听我怎样说完一句话</translation>
    </message>
    <message>
        <source>Wait for a fixed silence</source>
        <translation>等待固定的静音时长</translation>
    </message>
    <message>
        <source>Automatic (only for models that cost nothing)</source>
        <translation>自动（仅用于免费的模型）</translation>
    </message>
    <message>
        <source>Always</source>
        <translation>总是</translation>
    </message>
    <message>
        <source>Never</source>
        <translation>从不</translation>
    </message>
    <message>
        <source>Automatic (natural voice for English, system voice otherwise)</source>
        <translation>自动（英语用自然语音，其他语言用系统语音）</translation>
    </message>
    <message>
        <source>System voice</source>
        <translation>系统语音</translation>
    </message>
    <message>
        <source>Natural voice (Hibari, offline)</source>
        <translation>自然语音（Hibari，离线）</translation>
    </message>
    <message>
        <source>OpenAI speech (online)</source>
        <translation>OpenAI 语音（在线）</translation>
    </message>
    <message>
        <source>Raw sound (PCM)</source>
        <translation>原始声音（PCM）</translation>
    </message>
    <message>
        <source>WAV file</source>
        <translation>WAV 文件</translation>
    </message>
    <message>
        <source>In the window</source>
        <translation>在窗口中</translation>
    </message>
    <message>
        <source>In the window and in VTube Studio</source>
        <translation>在窗口中和 VTube Studio 里</translation>
    </message>
    <message>
        <source>As the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <source>English</source>
        <translation>English（英语）</translation>
    </message>
    <message>
        <source>中文 (Chinese)</source>
        <translation>中文</translation>
    </message>
    <message>
        <source>the provider&apos;s usual address</source>
        <translation>服务商的默认地址</translation>
    </message>
    <message>
        <source>detect it</source>
        <translation>自动识别</translation>
    </message>
    <message>
        <source>the recognizer&apos;s usual model</source>
        <translation>识别器的常用模型</translation>
    </message>
    <message>
        <source>The chat model that answers you: an embedded one runs offline on this computer; for a hosted one choose its provider and type its name.</source>
        <translation>回答你的对话模型：内置模型在这台电脑上离线运行；在线模型请选择提供商并输入模型名称。</translation>
    </message>
    <message>
        <source>For OpenAI models only: Responses is OpenAI&apos;s newer interface; Chat Completions works with every OpenAI-style server.</source>
        <translation>仅用于 OpenAI 模型：Responses 是 OpenAI 较新的接口；Chat Completions 适用于所有 OpenAI 风格的服务器。</translation>
    </message>
    <message>
        <source>For OpenAI vision models only: Responses is OpenAI&apos;s newer interface; Chat Completions works with every OpenAI-style server.</source>
        <translation>仅用于 OpenAI 视觉模型：Responses 是 OpenAI 较新的接口；Chat Completions 适用于所有 OpenAI 风格的服务器。</translation>
    </message>
    <message>
        <source>What turns your voice into text: the built-in recognizer works offline on this computer; the others are online services.</source>
        <translation>把你的声音变成文字的方式：内置识别器在这台电脑上离线工作；其他的是在线服务。</translation>
    </message>
    <message>
        <source>The recognition model&apos;s name; empty uses the recognizer&apos;s usual one (Whisper tiny for the built-in recognizer).</source>
        <translation>识别模型的名称；留空则使用识别器的常用模型（内置识别器为 Whisper tiny）。</translation>
    </message>
    <message>
        <source>Built-in recognizer only: a folder holding another faster-whisper model to use instead of the one that comes with Companion.</source>
        <translation>仅用于内置识别器：一个存放其他 faster-whisper 模型的文件夹，用来代替 Companion 自带的模型。</translation>
    </message>
    <message>
        <source>The language you speak, as a code such as en (English) or zh (Chinese); empty detects it.</source>
        <translation>你说的语言，用代码表示，例如 en（英语）或 zh（中文）；留空则自动识别。</translation>
    </message>
    <message>
        <source>Built-in recognizer only: how many processor threads it may use, from 1 to 256; automatic uses all of them.</source>
        <translation>仅用于内置识别器：可以使用多少个处理器线程，1 到 256；自动则全部使用。</translation>
    </message>
    <message>
        <source>Doubao only: your Volcengine APP ID.</source>
        <translation>仅用于豆包：你的火山引擎 APP ID。</translation>
    </message>
    <message>
        <source>Doubao only: the Volcengine resource ID; empty uses the usual one.</source>
        <translation>仅用于豆包：火山引擎资源 ID；留空则使用常用的那个。</translation>
    </message>
    <message>
        <source>Built-in recognizer only: seconds of new speech between live previews of your words while you talk, from 0 to 30; 0 turns the preview off.</source>
        <translation>仅用于内置识别器：你说话时，每说多少秒新内容就实时预览一次你的话，0 到 30；0 表示关闭预览。</translation>
    </message>
    <message>
        <source>How the companion knows you have finished: by listening to how your sentence ends and to its words, or by waiting for a fixed silence.</source>
        <translation>伙伴如何知道你说完了：听你句子的结尾和内容，或者等待固定的静音时长。</translation>
    </message>
    <message>
        <source>Let the model start its answer before it is sure you are done; the answer is used only if you were. Automatic does it for models that cost nothing (the embedded one, a server on this computer), not for hosted ones.</source>
        <translation>让模型在确定你说完之前就开始回答；只有你确实说完了才会用这个回答。自动：对免费的模型（内置模型、这台电脑上的服务器）开启，对在线模型关闭。</translation>
    </message>
    <message>
        <source>Speak over the companion to stop it (needs the echo kept out of the microphone and the microphone always on).</source>
        <translation>在伙伴说话时开口就能让它停下（需要不让麦克风听到它的声音，并且麦克风一直开着）。</translation>
    </message>
    <message>
        <source>How the microphone avoids hearing the companion: cancelling its echo lets you interrupt it; not listening while it speaks is surest with loud speakers.</source>
        <translation>麦克风如何避免听到伙伴的声音：消除回声可以让你打断它；它说话时不听，在音箱很响时最可靠。</translation>
    </message>
    <message>
        <source>What speaks: the natural offline voice, your system&apos;s voice, or an online speech service. Automatic uses the natural voice for English and the system&apos;s voice for other languages.</source>
        <translation>谁来说话：离线的自然语音、系统语音，或在线语音服务。自动：英语用自然语音，其他语言用系统语音。</translation>
    </message>
    <message>
        <source>OpenAI speech only: the speech server&apos;s address (it ends in /v1).</source>
        <translation>仅用于 OpenAI 语音：语音服务器的地址（以 /v1 结尾）。</translation>
    </message>
    <message>
        <source>OpenAI speech only: the speech model&apos;s name; empty uses gpt-4o-mini-tts.</source>
        <translation>仅用于 OpenAI 语音：语音模型的名称；留空则使用 gpt-4o-mini-tts。</translation>
    </message>
    <message>
        <source>OpenAI speech only: your secret key for the speech server; empty uses the OPENAI_API_KEY environment variable.</source>
        <translation>仅用于 OpenAI 语音：语音服务器的密钥；留空则使用环境变量 OPENAI_API_KEY。</translation>
    </message>
    <message>
        <source>OpenAI speech only: the sound format asked of the server; choose WAV if the server cannot send raw sound.</source>
        <translation>仅用于 OpenAI 语音：向服务器要求的声音格式；如果服务器不能发送原始声音，请选 WAV。</translation>
    </message>
    <message>
        <source>OpenAI speech only: how long to wait for the speech server, in seconds (more than 0, at most 600), before giving up.</source>
        <translation>仅用于 OpenAI 语音：放弃之前等待语音服务器多少秒（大于 0，最多 600）。</translation>
    </message>
    <message>
        <source>Natural voice only: another voice model file to use instead of the one that comes with it.</source>
        <translation>仅用于自然语音：用来代替自带模型的另一个语音模型文件。</translation>
    </message>
    <message>
        <source>The instructions that give the companion its personality, in your own words; empty uses the character file&apos;s instructions, which call the companion by the name above.</source>
        <translation>赋予伙伴性格的指令，用你自己的话写；留空则使用角色文件中的指令，指令里会用上面的名字称呼伙伴。</translation>
    </message>
    <message>
        <source>Your own programs the model may run as tools, by name. Written as JSON: each with &quot;command&quot;, &quot;description&quot;, &quot;parameters&quot; and &quot;timeout_s&quot;.</source>
        <translation>模型可以当作工具运行的你自己的程序，按名称列出。用 JSON 书写：每个包含 &quot;command&quot;、&quot;description&quot;、&quot;parameters&quot; 和 &quot;timeout_s&quot;。</translation>
    </message>
    <message>
        <source>A folder of avatar pictures (with its avatar.toml); empty uses the default character.</source>
        <translation>一个形象图片文件夹（带有 avatar.toml）；留空则使用默认角色。</translation>
    </message>
    <message>
        <source>Where the avatar moves: in Companion&apos;s window, or also as your VTube Studio model.</source>
        <translation>形象在哪里动：在 Companion 的窗口里，或者同时作为你的 VTube Studio 模型。</translation>
    </message>
    <message>
        <source>Which VTube Studio hotkey (its ID or name) shows each expression: an expression on the left, the hotkey on the right.</source>
        <translation>每个表情由哪个 VTube Studio 快捷键（ID 或名称）显示：左边是表情，右边是快捷键。</translation>
    </message>
    <message>
        <source>The language of the windows; automatic follows the system.</source>
        <translation>窗口的语言；自动则跟随系统。</translation>
    </message>
    <message>
        <source>Value</source>
        <translation>值</translation>
    </message>
    <message>
        <source> ms</source>
        <translation> 毫秒</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>Expression</source>
        <translation>表情</translation>
    </message>
    <message>
        <source>VTube Studio hotkey</source>
        <translation>VTube Studio 快捷键</translation>
    </message>
    <message>
        <source>Variable</source>
        <translation>变量</translation>
    </message>
    <message>
        <source>Allow plain http</source>
        <translation>允许明文 http</translation>
    </message>
    <message>
        <source>Send your key to a server outside this computer over plain http:// (readable on the way: only on a network you trust); off, such a server needs https://.</source>
        <translation>通过明文 http:// 把密钥发送到本机以外的服务器（途中可被读取：仅限你信任的网络）；关闭时，这样的服务器需要使用 https://。</translation>
    </message>
    <message>
        <source>Embedded model only: a GGUF model file to use instead of the one that comes with Companion.</source>
        <translation>仅用于内置模型：一个 GGUF 模型文件，用来代替 Companion 自带的模型。</translation>
    </message>
    <message>
        <source>Embedded model only: how many processor threads it may use, from 1 to 256; automatic uses all of them.</source>
        <translation>仅用于内置模型：可使用的处理器线程数，范围 1 到 256；选“自动”则使用全部线程。</translation>
    </message>
    <message>
        <source>Embedded model only: how much conversation it can keep in mind at once, in tokens, from 256 to 262,144.</source>
        <translation>仅用于内置模型：一次能记住多少对话内容，单位为 token，范围 256 到 262,144。</translation>
    </message>
    <message>
        <source>Local gpu</source>
        <translation>本地显卡</translation>
    </message>
    <message>
        <source>Embedded model only: auto runs it on the graphics card when llama-cpp-python was built for one (CUDA, Vulkan or Metal) and falls back to the processor if that fails; off always uses the processor.</source>
        <translation>仅用于内置模型：自动时，若 llama-cpp-python 是为显卡构建的（CUDA、Vulkan 或 Metal），就在显卡上运行，失败则改用处理器；关闭时始终使用处理器。</translation>
    </message>
    <message>
        <source>Speech recognition. `model`/`endpoint` unset = the adapter&apos;s default (whisper_local: tiny.en for English, Whisper base for other languages and auto). `api_key` is the speech service&apos;s own key, never the chat model&apos;s; doubao_asr also needs `app_id` (Volcengine APP ID) and may take `resource_id`.</source>
        <translation>语音识别。`model`/`endpoint` 未设置时使用适配器的默认值（whisper_local：英语用 tiny.en，其他语言和 auto 用 Whisper base）。`api_key` 是语音服务自己的密钥，而不是对话模型的密钥；doubao_asr 还需要 `app_id`（火山引擎 APP ID），并可设置 `resource_id`。</translation>
    </message>
    <message>
        <source>Threads</source>
        <translation>线程数</translation>
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
        <source>Stop threshold</source>
        <translation>停止阈值</translation>
    </message>
    <message>
        <source>End silence (ms)</source>
        <translation>结束静音（毫秒）</translation>
    </message>
    <message>
        <source>Pre speech pad (ms)</source>
        <translation>语音前缓冲（毫秒）</translation>
    </message>
    <message>
        <source>Min speech (ms)</source>
        <translation>最短语音（毫秒）</translation>
    </message>
    <message>
        <source>Max utterance (s)</source>
        <translation>单次发言上限（秒）</translation>
    </message>
    <message>
        <source>Barge in (ms)</source>
        <translation>打断所需时长（毫秒）</translation>
    </message>
    <message>
        <source>Turn</source>
        <translation>话轮</translation>
    </message>
    <message>
        <source>Endpointing</source>
        <translation>发言结束判断</translation>
    </message>
    <message>
        <source>How the companion knows you have finished: turn_model listens to how your sentence ends and to its words; silence waits for a fixed silence (Voice detection: end silence).</source>
        <translation>伙伴如何知道你说完了：turn_model 听你句子结尾的语调和用词；silence 等待一段固定的静默（语音检测：结束静默）。</translation>
    </message>
    <message>
        <source>First check (ms)</source>
        <translation>首次判断 (ms)</translation>
    </message>
    <message>
        <source>Silence after your words, in milliseconds (50 to 2000), before the turn model is first asked whether you are done.</source>
        <translation>你说完后静默多少毫秒（50 到 2000），话轮模型第一次判断你是否说完。</translation>
    </message>
    <message>
        <source>Recheck (ms)</source>
        <translation>再次判断 (ms)</translation>
    </message>
    <message>
        <source>While you stay silent and it is unsure, the turn model is asked again after this many more milliseconds (50 to 2000).</source>
        <translation>你保持静默而话轮模型不确定时，每再过这么多毫秒（50 到 2000）再判断一次。</translation>
    </message>
    <message>
        <source>Threshold</source>
        <translation>阈值</translation>
    </message>
    <message>
        <source>How sure the turn model must be (0 to 1) that you are done.</source>
        <translation>话轮模型需要多确定（0 到 1）你已经说完。</translation>
    </message>
    <message>
        <source>Doubt (ms)</source>
        <translation>犹豫等待 (ms)</translation>
    </message>
    <message>
        <source>Extra silence in milliseconds (0 to 3000) before the turn model&apos;s word ends your turn, scaled by how unsure it is: it waits this much longer when barely sure, hardly at all when certain.</source>
        <translation>话轮模型判断你说完后，再多等的静默毫秒数（0 到 3000），按它的不确定程度缩放：勉强确定时多等这么久，非常确定时几乎不等。</translation>
    </message>
    <message>
        <source>Settle (ms)</source>
        <translation>确认静默 (ms)</translation>
    </message>
    <message>
        <source>Silence in milliseconds (100 to 10000) after words that sound finished which ends your turn even when the turn model is unsure.</source>
        <translation>听起来已经说完的话之后，静默这么多毫秒（100 到 10000）就结束你的发言，即使话轮模型不确定。</translation>
    </message>
    <message>
        <source>Question settle (ms)</source>
        <translation>问题确认静默 (ms)</translation>
    </message>
    <message>
        <source>Fallback (ms)</source>
        <translation>最长静默 (ms)</translation>
    </message>
    <message>
        <source>The longest silence in milliseconds (500 to 10000) before your turn ends, however unfinished it sounds.</source>
        <translation>结束你的发言之前最长的静默，以毫秒计（500 到 10000），无论听起来是否说完。</translation>
    </message>
    <message>
        <source>Live transcript</source>
        <translation>实时转写</translation>
    </message>
    <message>
        <source>Transcribe while you speak: your words appear as you say them, and the answer can start sooner.</source>
        <translation>边说边转写：你说的话会随时显示出来，回答也能更早开始。</translation>
    </message>
    <message>
        <source>Pause (ms)</source>
        <translation>停顿 (ms)</translation>
    </message>
    <message>
        <source>A pause in your speech this long, in milliseconds (32 to 1000), has what you said so far transcribed at once.</source>
        <translation>你说话中停顿这么多毫秒（32 到 1000）时，立即转写你到目前为止说的话。</translation>
    </message>
    <message>
        <source>Continue within (s)</source>
        <translation>接着说的时限 (s)</translation>
    </message>
    <message>
        <source>If you go on speaking while the answer is being prepared, or within this many seconds (0 to 10) of it being spoken, the answer stops and your new words join what you said before; 0 treats every new word as an interruption.</source>
        <translation>如果在回答准备时，或回答开始说出后的这么多秒内（0 到 10）你接着说话，回答会停下，你新说的话会并入你之前说的话；0 表示把每次新说的话都当作打断。</translation>
    </message>
    <message>
        <source>Continue speech (ms)</source>
        <translation>接着说的说话时长 (ms)</translation>
    </message>
    <message>
        <source>How long you must speak, in milliseconds (64 to 2000), for the answer to stop because you went on.</source>
        <translation>你需要说多少毫秒（64 到 2000），回答才会因为你接着说而停下。</translation>
    </message>
    <message>
        <source>Speculative replies</source>
        <translation>预先回答</translation>
    </message>
    <message>
        <source>Let the model start its answer before it is sure you are done; the answer is used only if you were. auto: on for models that cost nothing (the embedded one, a server on this computer), off for hosted ones.</source>
        <translation>让模型在确定你说完之前就开始回答；只有你确实说完了才使用这个回答。auto：对不花钱的模型开启（内置模型、本机上的服务器），对在线模型关闭。</translation>
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
        <source>Let the model use tools, such as the clock and screenshots. The embedded model looks at your screen when you ask about it and always knows the time, but it cannot run your own tools or MCP servers.</source>
        <translation>允许模型使用工具，例如时钟和截图。内置模型会在你问到屏幕时看屏幕，也总是知道当前时间，但不能运行你自己的工具或 MCP 服务器。</translation>
    </message>
    <message>
        <source>Max tool calls per round</source>
        <translation>每轮最多工具调用数</translation>
    </message>
    <message>
        <source>How many tools the model may use at once, from 1 to 50; calls beyond that are not run, and the model is told so.</source>
        <translation>模型一次最多可以使用几个工具（1 到 50）；超出的调用不会运行，并会告知模型。</translation>
    </message>
    <message>
        <source>Max tool calls</source>
        <translation>最多工具调用数</translation>
    </message>
    <message>
        <source>How many tools the model may use while it answers one message, from 1 to 200; then it must answer with what it has.</source>
        <translation>模型回答一条消息时最多可以使用几次工具（1 到 200）；之后必须用已有的信息回答。</translation>
    </message>
    <message>
        <source>A user tool: a program run without a shell; `{param}` in an argument is replaced by the model&apos;s value. Its standard output is what the model reads.</source>
        <translation>用户工具：不经过 shell 运行的程序；参数中的 `{param}` 会被替换为模型给出的值。模型读取的是它的标准输出。</translation>
    </message>
    <message>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <source>The program to run and its arguments (one line or a list); {name} in an argument becomes the model&apos;s value for name.</source>
        <translation>要运行的程序及其参数（一行或一个列表）；参数中的 {name} 会变成模型为 name 给出的值。</translation>
    </message>
    <message>
        <source>Description</source>
        <translation>描述</translation>
    </message>
    <message>
        <source>What the tool does, told to the model so it knows when to use it.</source>
        <translation>工具的作用，会告诉模型，让它知道何时使用。</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>The values the model passes to the tool, by name (each with type, description, required, default).</source>
        <translation>模型传给工具的值，按名称列出（每个包含 type、description、required、default）。</translation>
    </message>
    <message>
        <source>One value the model passes to a user tool.</source>
        <translation>模型传给用户工具的一个值。</translation>
    </message>
    <message>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <source>The kind of value: string (text), integer, number or boolean (true or false).</source>
        <translation>值的种类：string（文本）、integer（整数）、number（数字）或 boolean（true 或 false）。</translation>
    </message>
    <message>
        <source>What the value means, told to the model so it fills it in well.</source>
        <translation>这个值的含义，会告诉模型，让它填得更好。</translation>
    </message>
    <message>
        <source>Required</source>
        <translation>必填</translation>
    </message>
    <message>
        <source>Whether the model must give this value; unset means required unless a default is given.</source>
        <translation>模型是否必须给出这个值；不设置则表示必填，除非给了默认值。</translation>
    </message>
    <message>
        <source>Default</source>
        <translation>默认值</translation>
    </message>
    <message>
        <source>The value used when the model gives none.</source>
        <translation>模型没有给出时使用的值。</translation>
    </message>
    <message>
        <source>How long the program may run, in seconds (more than 0, at most 3,600), before it is stopped.</source>
        <translation>程序被停止前最多可以运行多少秒（大于 0，最多 3,600）。</translation>
    </message>
    <message>
        <source>Accepts options</source>
        <translation>接受选项</translation>
    </message>
    <message>
        <source>Let the model&apos;s values start with &apos;-&apos;, so they can be options of the program; off, such a value is refused unless it comes after -- in the command.</source>
        <translation>允许模型的值以 &apos;-&apos; 开头，作为程序的选项；关闭时，这样的值会被拒绝，除非它在命令中的 -- 之后。</translation>
    </message>
    <message>
        <source>Environment variables for the program, by name (it gets only these and the basics such as PATH and HOME, never your keys).</source>
        <translation>按名称设置的程序环境变量（程序只会得到这些以及 PATH、HOME 等基本变量，绝不会得到你的密钥）。</translation>
    </message>
    <message>
        <source>An MCP server started as a child process and spoken to over stdio.</source>
        <translation>作为子进程启动、通过 stdio 通信的 MCP 服务器。</translation>
    </message>
    <message>
        <source>The program that starts the server (alone, or as a list with its arguments).</source>
        <translation>启动服务器的程序（单独写，或与参数一起写成列表）。</translation>
    </message>
    <message>
        <source>Args</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>More arguments given to the program.</source>
        <translation>传给程序的更多参数。</translation>
    </message>
    <message>
        <source>Env</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <source>Cwd</source>
        <translation>工作文件夹</translation>
    </message>
    <message>
        <source>The folder the server runs in; empty uses the folder the app was started in.</source>
        <translation>服务器运行所在的文件夹；留空则使用启动应用时所在的文件夹。</translation>
    </message>
    <message>
        <source>How long to wait for each answer from the server, in seconds (more than 0, at most 3,600).</source>
        <translation>等待服务器每次回答的秒数（大于 0，最多 3,600）。</translation>
    </message>
    <message>
        <source>Start this server with the app; off keeps it in the file, unused.</source>
        <translation>随应用启动这个服务器；关闭则保留在文件里但不使用。</translation>
    </message>
    <message>
        <source>Another OpenAI-compatible server</source>
        <translation>其他兼容 OpenAI 的服务器</translation>
    </message>
    <message>
        <source>The key is kept in your system&apos;s keyring, not in the settings file.</source>
        <translation>密钥保存在系统钥匙串中，不会写入设置文件。</translation>
    </message>
    <message>
        <source>This is how the microphone listens now (changed in the window); a choice made here applies now and when Companion starts.</source>
        <translation>这是麦克风现在的收音方式（在窗口中改过）；在这里做的选择会立即生效，下次启动 Companion 时也会使用。</translation>
    </message>
    <message>
        <source>Line {number}</source>
        <translation>第 {number} 行</translation>
    </message>
    <message>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <source>a whole number</source>
        <translation>整数</translation>
    </message>
    <message>
        <source>a number</source>
        <translation>数字</translation>
    </message>
    <message>
        <source>A row has a value but no name: give it a name.</source>
        <translation>有一行有值但没有名称：请给它起个名字。</translation>
    </message>
    <message>
        <source>An entry has no name: give it one.</source>
        <translation>有一项没有名称：请给它起个名字。</translation>
    </message>
    <message>
        <source>{where}: “{text}” is not {wanted}.</source>
        <translation>{where}：“{text}”不是{wanted}。</translation>
    </message>
    <message>
        <source>“{key}” is there twice.</source>
        <translation>“{key}”出现了两次。</translation>
    </message>
    <message>
        <source>Volume</source>
        <translation>音量</translation>
    </message>
    <message>
        <source>Echo tail (ms)</source>
        <translation>回声拖尾（毫秒）</translation>
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
        <source>TTS</source>
        <translation>语音合成</translation>
    </message>
    <message>
        <source>The voice&apos;s ID from the engine&apos;s list of voices; empty uses the engine&apos;s default voice.</source>
        <translation>引擎声音列表中的声音 ID；留空则使用引擎的默认声音。</translation>
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
        <source>Max sentences</source>
        <translation>最多句数</translation>
    </message>
    <message>
        <source>The most sentences in one reply, 0 to 50 (0: no limit); short replies suit a voice.</source>
        <translation>一次回复最多几句话，0 到 50（0 表示不限）；简短的回复更适合语音。</translation>
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
        <source>Max tool rounds</source>
        <translation>工具调用轮数上限</translation>
    </message>
    <message>
        <source>Tool timeout (s)</source>
        <translation>工具超时（秒）</translation>
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
        <source>Vision model</source>
        <translation>视觉模型</translation>
    </message>
    <message>
        <source>A model that describes images for a chat model that cannot see, as provider/name; empty: none.</source>
        <translation>为不能看图的对话模型描述图片的模型，格式为 provider/name；留空则不使用。</translation>
    </message>
    <message>
        <source>Vision base URL</source>
        <translation>视觉模型服务器地址</translation>
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
        <source>The recognition model&apos;s name; empty uses the recognizer&apos;s default (whisper_local: tiny.en for English, base for other languages).</source>
        <translation>识别模型的名称；留空则使用识别器的默认模型（whisper_local：英语用 tiny.en，其他语言用 base）。</translation>
    </message>
    <message>
        <source>The language you speak, as a code such as en or zh; auto follows the language of the windows and hears another when it is sure.</source>
        <translation>你说的语言，填写语言代码，例如 en 或 zh；auto 则跟随窗口的语言，确定听到的是另一种语言时就按那种语言识别。</translation>
    </message>
    <message>
        <source>Silence in milliseconds (100 to 10000) after a question you finished asking which ends your turn: a question hands the turn over, so it is answered sooner (never later than after settle_ms).</source>
        <translation>你问完一个问题后，静默这么多毫秒（100 到 10000）就结束你的发言：问题就是把话轮交出来，所以回答得更快（不会晚于 settle_ms）。</translation>
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
        <source>Environment variables for the server, by name (it gets only these and the basics such as PATH and HOME, never your keys).</source>
        <translation>按名称设置的服务器环境变量（服务器只会得到这些以及 PATH、HOME 等基本变量，绝不会得到你的密钥）。</translation>
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
        <source>Live2d</source>
        <translation>Live2D</translation>
    </message>
    <message>
        <source>Your own Live2D model (made with Cubism 3 or later), shown instead of the built-in avatar in the window and as the desktop pet. How it shows each expression is in companion-expressions.toml beside the model, which you may edit.</source>
        <translation>你自己的 Live2D 模型（用 Cubism 3 或更高版本制作），在窗口和桌面宠物中代替内置形象显示。它如何表现每种表情写在模型旁边的 companion-expressions.toml 里，你可以编辑。</translation>
    </message>
    <message>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <source>The folder of your Live2D model (the one with the .model3.json file); empty shows the built-in avatar.</source>
        <translation>你的 Live2D 模型所在的文件夹（包含 .model3.json 文件的那个）；留空则显示内置形象。</translation>
    </message>
    <message>
        <source>Scale</source>
        <translation>缩放</translation>
    </message>
    <message>
        <source>How big the model is drawn: 1 fits it in the avatar&apos;s place; from 0.2 to 5.</source>
        <translation>模型画多大：1 表示正好放进形象的位置；范围 0.2 到 5。</translation>
    </message>
    <message>
        <source>X</source>
        <translation>X</translation>
    </message>
    <message>
        <source>Moves the model right (or left, below 0); 1 is half the avatar&apos;s width; from -2 to 2.</source>
        <translation>把模型向右移（小于 0 则向左）；1 为形象宽度的一半；范围 -2 到 2。</translation>
    </message>
    <message>
        <source>Y</source>
        <translation>Y</translation>
    </message>
    <message>
        <source>Moves the model up (or down, below 0); 1 is half the avatar&apos;s height; from -2 to 2.</source>
        <translation>把模型向上移（小于 0 则向下）；1 为形象高度的一半；范围 -2 到 2。</translation>
    </message>
    <message>
        <source>Follow mouse</source>
        <translation>跟随鼠标</translation>
    </message>
    <message>
        <source>The model&apos;s eyes and head turn towards the mouse pointer.</source>
        <translation>模型的眼睛和头会转向鼠标指针。</translation>
    </message>
    <message>
        <source>Frame rate</source>
        <translation>帧率</translation>
    </message>
    <message>
        <source>Frames drawn per second while the model is on screen; fewer use less of the processor; from 5 to 60.</source>
        <translation>模型显示在屏幕上时每秒绘制的帧数；越少越省处理器；范围 5 到 60。</translation>
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
        <source>Enabled</source>
        <translation>启用</translation>
    </message>
    <message>
        <source>Remember what you tell the companion from one conversation to the next (kept on this computer; only the chat model you chose reads it).</source>
        <translation>在不同对话之间记住你告诉伙伴的事（保存在这台电脑上；只有你选择的聊天模型会读取）。</translation>
    </message>
    <message>
        <source>Learn</source>
        <translation>学习</translation>
    </message>
    <message>
        <source>After each reply, ask the chat model what you said that is worth remembering; off: only what you ask it to remember (&quot;remember that …&quot;).</source>
        <translation>每次回复后，请聊天模型找出你说的话中值得记住的内容；关闭时只记住你明确要求记住的（“记住……”）。</translation>
    </message>
    <message>
        <source>Recall tokens</source>
        <translation>回忆词元数</translation>
    </message>
    <message>
        <source>How much of its memory the companion reads before each reply, in tokens, from 50 to 4,000 (a token is about three quarters of a word).</source>
        <translation>伙伴在每次回复前读取多少记忆，以词元计，50 到 4,000（一个词元约为四分之三个英文单词）。</translation>
    </message>
    <message>
        <source>Expression idle (s)</source>
        <translation>表情复原（秒）</translation>
    </message>
    <message>
        <source>Set by the environment variable {name}, which wins over this file: change or remove the variable to change this.</source>
        <translation>由环境变量 {name} 设置，它优先于设置文件：要修改这里，请修改或删除该变量。</translation>
    </message>
    <message>
        <source>Set by the command-line option {option} for this run: start Companion without it to change this here.</source>
        <translation>本次运行由命令行选项 {option} 设置：不带该选项启动 Companion 后才能在这里修改。</translation>
    </message>
    <message>
        <source>Choose…</source>
        <translation>选择…</translation>
    </message>
    <message>
        <source>The saved key is removed when you save.</source>
        <translation>保存时会删除已保存的密钥。</translation>
    </message>
    <message>
        <source>Choose a folder</source>
        <translation>选择文件夹</translation>
    </message>
    <message>
        <source>A key is stored in the system keyring.</source>
        <translation>系统密钥环中已保存了一个密钥。</translation>
    </message>
    <message>
        <source>The settings file refers to a key in the system keyring, but the keyring has none: enter the key again.</source>
        <translation>设置文件指向系统密钥环中的密钥，但密钥环里没有：请重新输入密钥。</translation>
    </message>
    <message>
        <source>A key is stored in the settings file (no system keyring works here).</source>
        <translation>密钥保存在设置文件中（这台电脑上没有可用的系统密钥环）。</translation>
    </message>
    <message>
        <source>(saved — leave empty to keep it)</source>
        <translation>（已保存 — 留空则保持不变）</translation>
    </message>
    <message>
        <source>No system keyring works here: the key is kept in the settings file, readable only by you. To keep it out of the file, leave this empty and set it in the environment instead (OPENAI_API_KEY, ANTHROPIC_API_KEY, …).</source>
        <translation>此系统上没有可用的系统钥匙串：密钥会保存在设置文件中，只有你能读取。若不想把它写进文件，请将此处留空，改为在环境变量中设置（OPENAI_API_KEY、ANTHROPIC_API_KEY 等）。</translation>
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
        <source>AWS region</source>
        <translation>AWS 区域</translation>
    </message>
    <message>
        <source>AWS profile</source>
        <translation>AWS 配置</translation>
    </message>
    <message>
        <source>How varied the replies are, from 0 to 2: lower is steadier, higher more playful; automatic leaves it to the model.</source>
        <translation>回复的多样性，范围 0 到 2：越低越稳定，越高越活泼；选“自动”则由模型决定。</translation>
    </message>
    <message>
        <source>The longest reply, in tokens, from 1 to 1,000,000 (a token is about three quarters of a word); automatic leaves it to the model.</source>
        <translation>回复的最大长度，单位为 token，范围 1 到 1,000,000（1 个 token 约为 3/4 个英文单词）；选“自动”则由模型决定。</translation>
    </message>
    <message>
        <source>How long to wait for the chat model (and the vision model), in seconds (more than 0, at most 3,600), before giving up.</source>
        <translation>等待对话模型（及视觉模型）响应的最长时间，单位为秒（大于 0，最多 3,600），超时即放弃。</translation>
    </message>
    <message>
        <source>whisper_local only: how many processor threads recognition may use, from 1 to 256; automatic uses all of them.</source>
        <translation>仅限 whisper_local：语音识别可使用的处理器线程数，范围 1 到 256；选“自动”则使用全部线程。</translation>
    </message>
    <message>
        <source>whisper_local only: seconds of new speech between live previews of your words while you talk, from 0 to 30; 0 turns the preview off.</source>
        <translation>仅限 whisper_local：说话时，每多说这么多秒就刷新一次文字实时预览，范围 0 到 30；设为 0 则关闭预览。</translation>
    </message>
    <message>
        <source>How long to wait for the speech service, in seconds (more than 0, at most 600), before giving up.</source>
        <translation>等待语音服务响应的最长时间，单位为秒（大于 0，最多 600），超时即放弃。</translation>
    </message>
    <message>
        <source>How sure the detector must be, from 0 to 1, that you started speaking; higher ignores more background noise.</source>
        <translation>检测器要有多大把握（0 到 1）才认定你开始说话；数值越高，越能忽略背景噪音。</translation>
    </message>
    <message>
        <source>Below this certainty, from 0 to 1, a moment counts as a pause in your speech; keep it under the start threshold.</source>
        <translation>把握度（0 到 1）低于此值时，视为你在停顿；应低于开始阈值。</translation>
    </message>
    <message>
        <source>Silence after speech, in milliseconds (100 to 5,000), before your turn ends.</source>
        <translation>说完话后静默多少毫秒（100 到 5,000），才算你这一轮说完。</translation>
    </message>
    <message>
        <source>Sound kept from just before your speech was noticed, in milliseconds (0 to 2,000), so the first word is not cut off.</source>
        <translation>保留检测到语音之前的一小段声音，单位为毫秒（0 到 2,000），避免第一个字被截掉。</translation>
    </message>
    <message>
        <source>Sounds shorter than this, in milliseconds (0 to 5,000), are ignored as noise (a cough, a click).</source>
        <translation>短于此时长（毫秒，0 到 5,000）的声音会被当作噪音忽略（如咳嗽声、点击声）。</translation>
    </message>
    <message>
        <source>The longest one turn of speech can be, in seconds (1 to 300); longer speech is cut and sent at that point.</source>
        <translation>一轮发言的最长时间，单位为秒（1 到 300）；超出时会在此处截断并发送。</translation>
    </message>
    <message>
        <source>How long you must speak over the companion, in milliseconds (100 to 5,000), before it stops to listen.</source>
        <translation>伙伴说话时，你需要持续说多少毫秒（100 到 5,000），伙伴才会停下来听你说。</translation>
    </message>
    <message>
        <source>How loud the companion&apos;s voice is, from 0 to 2: 1 is normal, 0 silent, 2 twice as loud.</source>
        <translation>伙伴说话的音量，范围 0 到 2：1 为正常，0 为静音，2 为两倍音量。</translation>
    </message>
    <message>
        <source>How long the room&apos;s echo of the companion&apos;s voice lasts, in milliseconds (0 to 2,000); the microphone ignores that echo.</source>
        <translation>伙伴的声音在房间里的回声会持续多久，单位为毫秒（0 到 2,000）；麦克风会忽略这段回声。</translation>
    </message>
    <message>
        <source>When you speak over the companion but say no words, it carries on where it stopped after this many seconds (0.1 to 10).</source>
        <translation>如果你打断了伙伴却没有说出话，伙伴会在这么多秒（0.1 到 10）后从中断处接着说。</translation>
    </message>
    <message>
        <source>How fast the companion speaks, in words per minute, from 60 to 400; 175 is the normal pace.</source>
        <translation>伙伴的语速，单位为每分钟词数，范围 60 到 400；175 为正常语速。</translation>
    </message>
    <message>
        <source>openai_speech only: how long to wait for the speech server, in seconds (more than 0, at most 600), before giving up.</source>
        <translation>仅限 openai_speech：等待语音服务器响应的最长时间，单位为秒（大于 0，最多 600），超时即放弃。</translation>
    </message>
    <message>
        <source>How many times in a row the model may use tools before it must answer you, from 0 to 50.</source>
        <translation>模型最多可以连续使用几次工具（0 到 50），之后必须回答你。</translation>
    </message>
    <message>
        <source>The longest a built-in tool (screenshot, clock, clipboard) may run, in seconds (more than 0, at most 600); your own tools and MCP servers have their own limits.</source>
        <translation>内置工具（截图、时钟、剪贴板）的最长运行时间，单位为秒（大于 0，最多 600）；自定义工具和 MCP 服务器有各自的限制。</translation>
    </message>
    <message>
        <source>How much conversation the chat model can read at once, in tokens, from 256 to 10,000,000; automatic looks it up in the model list.</source>
        <translation>对话模型一次能读取多少对话内容，单位为 token，范围 256 到 10,000,000；选“自动”则在模型列表中查询。</translation>
    </message>
    <message>
        <source>Seconds without a new expression before the face goes back to neutral (more than 0, at most 3,600); automatic uses the general expression idle time.</source>
        <translation>多少秒没有新表情后，表情恢复平静（大于 0，最多 3,600）；选“自动”则使用通用的表情复原时间。</translation>
    </message>
    <message>
        <source>The port of VTube Studio&apos;s plugin API, from 1 to 65,535 (8001 unless you changed it in VTube Studio).</source>
        <translation>VTube Studio 插件 API 的端口，范围 1 到 65,535（默认为 8001，除非你在 VTube Studio 中改过）。</translation>
    </message>
    <message>
        <source>Long-term memory: what the companion remembers about you across conversations, kept in one file in the data folder, memory.sqlite3; each character has its own.</source>
        <translation>长期记忆：伙伴在不同对话之间记得的关于你的事，保存在数据文件夹里的一个文件 memory.sqlite3 中；每个角色各有自己的记忆。</translation>
    </message>
    <message>
        <source>Seconds without a new expression before the avatar&apos;s face goes back to neutral (more than 0, at most 3,600).</source>
        <translation>多少秒没有新表情后，形象的表情恢复平静（大于 0，最多 3,600）。</translation>
    </message>
    <message>
        <source>The avatar. `pack`: a sprite pack folder (frames + `avatar.toml`); unset, the default character. `live2d`: your own Live2D model instead. `renderer`: `sprite` (in the window) or `vtube_studio` (also drive a VTube Studio model). `idle_s`: back to neutral after this long without a new expression (unset: `expression_idle_s`).</source>
        <translation>形象。`pack`：形象包文件夹（帧图片 + `avatar.toml`），未设置时使用默认角色。`live2d`：改用你自己的 Live2D 模型。`renderer`：`sprite`（在窗口中显示）或 `vtube_studio`（同时驱动 VTube Studio 模型）。`idle_s`：多久没有新表情后恢复平静表情（未设置时使用 `expression_idle_s`）。</translation>
    </message>
    <message>
        <source>The chat model. `model` is `provider/name`; `local/qwen2.5-coder-1.5b` is the embedded default, `local/smollm2` the small embedded choice.</source>
        <translation>对话模型。`model` 的格式为 `provider/name`；默认使用内置的 `local/qwen2.5-coder-1.5b`，`local/smollm2` 是更小的内置选择。</translation>
    </message>
    <message>
        <source>The chat model that answers you, as provider/name; local/qwen2.5-coder-1.5b (smart) and local/smollm2 (small) run offline on this computer.</source>
        <translation>负责回答你的对话模型，格式为 provider/name；local/qwen2.5-coder-1.5b（聪明）和 local/smollm2（小巧）在这台电脑上离线运行。</translation>
    </message>
    <message>
        <source>The voice. `engine`: `auto` (the default: the offline neural voice hibari for sentences in the Latin alphabet, the system voice for other scripts such as Chinese, and for everything when hibari cannot load), `pyttsx3` (the system voice), `hibari` (the neural voice alone) or `openai_speech` (OpenAI or any server with an OpenAI-compatible `/audio/speech`). `voice` is an id from that engine&apos;s voice list (with `auto`, a system voice&apos;s id means the system voice speaks everything); `rate` is words per minute (175 = the engine&apos;s normal pace).</source>
        <translation>声音。`engine`：`auto`（默认：拉丁字母的句子由离线神经语音 hibari 朗读，中文等其他文字由系统语音朗读；hibari 无法加载时全部由系统语音朗读）、`pyttsx3`（系统语音）、`hibari`（只用神经语音）或 `openai_speech`（OpenAI 或任何提供 OpenAI 兼容 `/audio/speech` 的服务器）。`voice` 是该引擎语音列表中的 ID（使用 `auto` 时，填写系统语音的 ID 表示全部由系统语音朗读）；`rate` 是每分钟的词数（175 为引擎的正常语速）。</translation>
    </message>
    <message>
        <source>What speaks: auto uses the natural offline voice for English and the system&apos;s voice for other languages; pyttsx3 is the system&apos;s voice, hibari the natural voice alone, openai_speech an online speech service.</source>
        <translation>由谁来说话：auto 对英语使用离线自然语音，对其他语言使用系统语音；pyttsx3 是系统语音，hibari 只用自然语音，openai_speech 是在线语音服务。</translation>
    </message>
    <message>
        <source>Turn-taking: how the companion knows you have finished speaking, hears your words while you speak, and may start its answer before it is sure.</source>
        <translation>轮流对话：伙伴如何知道你说完了，如何边听边转写你的话，以及如何在确定之前就开始回答。</translation>
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
        <source>This is not valid JSON (line {line}: {msg}).</source>
        <translation>这不是有效的 JSON（第 {line} 行：{msg}）。</translation>
    </message>
    <message>
        <source>{path} cannot be read ({error}); fix or delete it.</source>
        <translation>无法读取 {path}（{error}），请修正或删除该文件。</translation>
    </message>
    <message>
        <source>Smart (1.5B, 1.1 GB)</source>
        <translation>聪明（1.5B，1.1 GB）</translation>
    </message>
    <message>
        <source>Small (135M, 100 MB)</source>
        <translation>小巧（135M，100 MB）</translation>
    </message>
    <message>
        <source>Not used by the embedded model: choose another provider above to fill this in.</source>
        <translation>内置模型用不到这一项：在上面选择其他提供商后才能填写。</translation>
    </message>
    <message>
        <source>Only for Ollama or another OpenAI-compatible server.</source>
        <translation>仅用于 Ollama 或其他 OpenAI 兼容服务器。</translation>
    </message>
    <message>
        <source>Only for OpenAI.</source>
        <translation>仅用于 OpenAI。</translation>
    </message>
    <message>
        <source>Only for Amazon Bedrock.</source>
        <translation>仅用于 Amazon Bedrock。</translation>
    </message>
    <message>
        <source>Only for the embedded model.</source>
        <translation>仅用于内置模型。</translation>
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
        <source>Companion could not start: {0}</source>
        <translation>Companion 无法启动：{0}</translation>
    </message>
</context>
<context>
    <name>StatusLine</name>
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
        <source>preparing the embedded chat model: joining its parts</source>
        <translation>正在准备内置对话模型：合并分卷</translation>
    </message>
    <message>
        <source>preparing the embedded chat model: checking it</source>
        <translation>正在准备内置对话模型：校验文件</translation>
    </message>
    <message>
        <source>loading the embedded chat model</source>
        <translation>正在加载内置对话模型</translation>
    </message>
    <message>
        <source>the reply is shown: no sound output</source>
        <translation>回复以文字显示：没有声音输出设备</translation>
    </message>
    <message>
        <source>the local model</source>
        <translation>内置模型</translation>
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
        <source>Replying</source>
        <translation>正在回复</translation>
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
        <source>Mic paused</source>
        <translation>麦克风已暂停</translation>
    </message>
    <message>
        <source>until the sound test ends</source>
        <translation>声音测试结束前不收音</translation>
    </message>
    <message>
        <source>hold to talk</source>
        <translation>按住说话</translation>
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
        <source>Heard while I was speaking: “{0}”. Say it again if it was for me.</source>
        <translation>我说话时听到了：“{0}”。如果是对我说的，请再说一遍。</translation>
    </message>
    <message>
        <source>Dismiss</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>Microphone unavailable</source>
        <translation>麦克风不可用</translation>
    </message>
    <message>
        <source>still waiting for {0} ({1} s)</source>
        <translation>仍在等待 {0}（{1} 秒）</translation>
    </message>
    <message>
        <source>Microphone unavailable — {0}</source>
        <translation>麦克风不可用 — {0}</translation>
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
