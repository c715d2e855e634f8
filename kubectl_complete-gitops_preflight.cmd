@echo off
rem Shell completion helper for "kubectl gitops-preflight" on Windows
rem (kubectl 1.26 or newer runs kubectl_complete-gitops_preflight from PATH,
rem finding this file through PATHEXT). It runs the plugin next to it, else
rem the one on PATH, and drops stderr: only the candidates go to kubectl.
if exist "%~dp0kubectl-gitops_preflight.exe" (
  "%~dp0kubectl-gitops_preflight.exe" __complete %* 2>NUL
) else if exist "%~dp0bin\kubectl-gitops_preflight.exe" (
  "%~dp0bin\kubectl-gitops_preflight.exe" __complete %* 2>NUL
) else (
  kubectl-gitops_preflight.exe __complete %* 2>NUL
)
exit /b %ERRORLEVEL%
