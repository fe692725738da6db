; Inno Setup 6 script: a per-user installer for the PyInstaller bundle dist\companion\.
; Build on Windows (see packaging\README.md):
;   python packaging\build.py --windowed --self-test
;   "%ProgramFiles(x86)%\Inno Setup 6\ISCC.exe" /DAppVersion=0.1.0 packaging\windows\companion.iss
; Output: dist\Companion-0.1.0-setup.exe

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "Companion"
#define AppExe "companion.exe"

[Setup]
; A fixed AppId keeps upgrades and the uninstaller tied to one product.
AppId={{8B6F3C2E-5D1A-4E7B-9C43-2F0A6D8E1B57}
AppName={#AppName}
AppVersion={#AppVersion}
AppPublisher=Companion developers
AppPublisherURL=https://github.com/companion-app/companion
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; Per-user install: no administrator rights, goes to %LOCALAPPDATA%\Programs\Companion.
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
MinVersion=10.0
OutputDir=..\..\dist
OutputBaseFilename={#AppName}-{#AppVersion}-setup
SetupIconFile=..\icons\companion.ico
UninstallDisplayIcon={app}\{#AppExe}
UninstallDisplayName={#AppName}
Compression=lzma2/max
SolidCompression=yes
WizardStyle=modern
CloseApplications=yes
; Sign the installer and uninstaller (define SignTool "signtool" in the Inno Setup IDE or
; pass /Ssigntool="signtool.exe sign /fd sha256 /tr http://timestamp.digicert.com /td sha256 /a $f").
#ifdef SignTool
SignTool={#SignTool}
SignedUninstaller=yes
#endif

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "..\..\dist\companion\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{app}"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\{#AppExe}"; WorkingDir: "{app}"; Tasks: desktopicon

[Run]
Filename: "{app}\{#AppExe}"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Only what the app itself leaves in its install folder; the user's config
; (%APPDATA%\companion) and history (%LOCALAPPDATA%\companion) are kept.
Type: filesandordirs; Name: "{app}\_internal\__pycache__"
