//! A headless Chromium for the page tests, driven through the DevTools protocol
//! over `--remote-debugging-pipe` (JSON messages ended by NUL bytes on the
//! browser's file descriptors 3 and 4, which a `sh` wrapper connects to our pipes),
//! with the few commands the tests need: open a file, evaluate script, click,
//! take a screenshot, and collect console errors and network requests. Firefox,
//! which has no such pipe, is only asked for a screenshot.

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

/// How long one command may take before the test gives up.
const TIMEOUT: Duration = Duration::from_secs(60);

/// The Chromium to use: `SPU_CHROMIUM`, else `chromium`, `chromium-browser` or
/// `google-chrome` on the `PATH`; the error says why there is none.
pub fn find_chromium() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("SPU_CHROMIUM") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "SPU_CHROMIUM names `{}`, which is not a file",
                p.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err("no chromium, chromium-browser or google-chrome on the PATH (install Debian's `chromium`, or set SPU_CHROMIUM)".into())
}

/// The Firefox to use: `SPU_FIREFOX`, else `firefox-esr` or `firefox` on the
/// `PATH`; the error says why there is none.
pub fn find_firefox() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("SPU_FIREFOX") {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(format!(
                "SPU_FIREFOX names `{}`, which is not a file",
                p.display()
            ))
        };
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for name in ["firefox-esr", "firefox"] {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(name);
            if p.is_file() {
                return Ok(p);
            }
        }
    }
    Err("no firefox-esr or firefox on the PATH (install Debian's `firefox-esr`, or set SPU_FIREFOX)".into())
}

/// A screenshot of `file` as headless Firefox shows it once loaded, in a
/// `width` x `height` window, with a fresh profile (and home, so nothing of the
/// user's is read or written). Gives up after two minutes.
pub fn firefox_screenshot(
    exe: &Path,
    file: &Path,
    width: u32,
    height: u32,
) -> Result<Vec<u8>, String> {
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let profile = home.path().join("profile");
    std::fs::create_dir(&profile).map_err(|e| e.to_string())?;
    let out = home.path().join("shot.png");
    let mut child = Command::new(exe)
        .env("HOME", home.path())
        .env("MOZ_HEADLESS", "1")
        .arg("--headless")
        .arg("--no-remote")
        .arg("--profile")
        .arg(&profile)
        .arg(format!("--window-size={width},{height}"))
        .arg("--screenshot")
        .arg(&out)
        .arg(format!("file://{}", file.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start `{}`: {e}", exe.display()))?;
    let start = Instant::now();
    loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(_) => break,
            None if start.elapsed() > 2 * TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("firefox took more than two minutes".into());
            }
            None => std::thread::sleep(Duration::from_millis(100)),
        }
    }
    std::fs::read(&out).map_err(|e| format!("firefox wrote no screenshot: {e}"))
}

/// True when the tests must not skip for want of a browser (CI sets it).
pub fn required() -> bool {
    std::env::var_os("SPU_REQUIRE_CHROMIUM").is_some_and(|v| v == "1")
}

/// One browser with one page.
#[derive(Debug)]
pub struct Browser {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next_id: u64,
    session: String,
    /// Events received so far (console messages, exceptions, requests).
    pub events: Vec<Value>,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// Starts `exe` headless with a fresh profile and a `width` x `height` page.
    pub fn launch(exe: &Path, width: u32, height: u32) -> Result<Browser, String> {
        let profile = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut child = Command::new("sh")
            .arg("-c")
            // Our stdin becomes the browser's fd 3 (commands), our stdout its fd 4.
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null"#)
            .arg(exe)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-extensions",
                "--disable-default-apps",
                "--no-first-run",
                "--no-default-browser-check",
                "--mute-audio",
                "--hide-scrollbars",
                "--remote-debugging-pipe",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(format!("--window-size={width},{height}"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", exe.display()))?;
        let to = child.stdin.take().ok_or("no pipe to the browser")?;
        let stdout = child.stdout.take().ok_or("no pipe from the browser")?;
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut buf = Vec::new();
            while let Ok(n) = reader.read_until(0, &mut buf) {
                if n == 0 {
                    break;
                }
                if buf.last() == Some(&0) {
                    buf.pop();
                }
                if let Ok(v) = serde_json::from_slice::<Value>(&buf)
                    && tx.send(v).is_err()
                {
                    break;
                }
                buf.clear();
            }
        });
        let mut b = Browser {
            child,
            to,
            from: rx,
            next_id: 0,
            session: String::new(),
            events: Vec::new(),
            _profile: profile,
        };
        let target = b.browser_call("Target.createTarget", json!({"url": "about:blank"}))?;
        let id = target["targetId"]
            .as_str()
            .ok_or("no target id")?
            .to_string();
        let attached = b.browser_call(
            "Target.attachToTarget",
            json!({"targetId": id, "flatten": true}),
        )?;
        b.session = attached["sessionId"]
            .as_str()
            .ok_or("no session id")?
            .to_string();
        for domain in [
            "Page.enable",
            "Runtime.enable",
            "Log.enable",
            "Network.enable",
        ] {
            b.call(domain, json!({}))?;
        }
        b.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": height, "deviceScaleFactor": 1, "mobile": false}),
        )?;
        Ok(b)
    }

    fn send(&mut self, method: &str, params: Value, session: bool) -> Result<Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut msg = json!({"id": id, "method": method, "params": params});
        if session {
            msg["sessionId"] = Value::String(self.session.clone());
        }
        let mut bytes = serde_json::to_vec(&msg).map_err(|e| e.to_string())?;
        bytes.push(0);
        self.to
            .write_all(&bytes)
            .and_then(|()| self.to.flush())
            .map_err(|e| format!("{method}: the browser went away: {e}"))?;
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = match self.from.recv_timeout(left) {
                Ok(v) => v,
                Err(RecvTimeoutError::Timeout) => return Err(format!("{method}: no answer")),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(format!("{method}: the browser closed its pipe"));
                }
            };
            if v["id"].as_u64() == Some(id) {
                if let Some(e) = v.get("error") {
                    return Err(format!("{method}: {e}"));
                }
                return Ok(v["result"].clone());
            }
            self.events.push(v);
        }
    }

    fn browser_call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.send(method, params, false)
    }

    /// A command to the page.
    pub fn call(&mut self, method: &str, params: Value) -> Result<Value, String> {
        self.send(method, params, true)
    }

    /// Waits for an event of the page.
    fn wait_event(&mut self, method: &str) -> Result<Value, String> {
        if let Some(i) = self.events.iter().position(|e| e["method"] == method) {
            return Ok(self.events.remove(i));
        }
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .from
                .recv_timeout(left)
                .map_err(|_| format!("no {method} event"))?;
            if v["method"] == method {
                return Ok(v);
            }
            self.events.push(v);
        }
    }

    /// Opens a file and waits until the page says it is ready.
    pub fn open(&mut self, file: &Path) -> Result<(), String> {
        let path = file.canonicalize().map_err(|e| e.to_string())?;
        let url = format!("file://{}", path.display());
        self.events.retain(|e| e["method"] != "Page.loadEventFired");
        self.call("Page.navigate", json!({"url": url}))?;
        self.wait_event("Page.loadEventFired")?;
        let deadline = Instant::now() + TIMEOUT;
        while self.eval("document.body && document.body.dataset.ready === '1'")? != json!(true) {
            if Instant::now() > deadline {
                return Err(format!(
                    "`{}` never became ready; errors: {:?}",
                    file.display(),
                    self.errors()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    /// The value of a script expression (promises are awaited).
    pub fn eval(&mut self, expression: &str) -> Result<Value, String> {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true, "awaitPromise": true}),
        )?;
        if let Some(e) = r.get("exceptionDetails") {
            return Err(format!("`{expression}` threw: {e}"));
        }
        Ok(r["result"]["value"].clone())
    }

    /// Clicks the middle of the first element matching a CSS selector, as a
    /// person would (mouse down and up at that point).
    pub fn click(&mut self, selector: &str) -> Result<(), String> {
        let sel = serde_json::to_string(selector).map_err(|e| e.to_string())?;
        let at = self.eval(&format!(
            "(() => {{ const e = document.querySelector({sel}); if (!e) return null; e.scrollIntoView({{block: 'center'}}); const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; }})()"
        ))?;
        let (x, y) = match (at[0].as_f64(), at[1].as_f64()) {
            (Some(x), Some(y)) => (x, y),
            _ => return Err(format!("nothing matches `{selector}`")),
        };
        for kind in ["mousePressed", "mouseReleased"] {
            self.call(
                "Input.dispatchMouseEvent",
                json!({"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1}),
            )?;
        }
        Ok(())
    }

    /// A PNG of the page as it is shown.
    pub fn screenshot(&mut self) -> Result<Vec<u8>, String> {
        let r = self.call("Page.captureScreenshot", json!({"format": "png"}))?;
        let data = r["data"].as_str().ok_or("no screenshot data")?;
        base64_decode(data)
    }

    /// Console errors and uncaught exceptions so far.
    pub fn errors(&self) -> Vec<String> {
        self.events
            .iter()
            .filter_map(|e| match e["method"].as_str()? {
                "Runtime.exceptionThrown" => Some(e["params"]["exceptionDetails"].to_string()),
                "Runtime.consoleAPICalled" if e["params"]["type"] == "error" => {
                    Some(e["params"]["args"].to_string())
                }
                "Log.entryAdded" if e["params"]["entry"]["level"] == "error" => {
                    Some(e["params"]["entry"]["text"].to_string())
                }
                _ => None,
            })
            .collect()
    }

    /// URLs the page requested that are not the file itself or inline data.
    pub fn network_requests(&self) -> Vec<String> {
        self.events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .filter_map(|e| e["params"]["request"]["url"].as_str())
            .filter(|u| !u.starts_with("file://") && !u.starts_with("data:"))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.browser_call("Browser.close", json!({}));
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (the screenshots' encoding).
pub fn base64_decode(text: &str) -> Result<Vec<u8>, String> {
    let value = |c: u8| -> Result<u32, String> {
        Ok(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return Err(format!("not base64: {:?}", c as char)),
        }
        .into())
    };
    let bytes: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for chunk in bytes.chunks(4) {
        let digits: Vec<u8> = chunk.iter().copied().filter(|&b| b != b'=').collect();
        let mut acc = 0u32;
        for &d in &digits {
            acc = (acc << 6) | value(d)?;
        }
        acc <<= 6 * (4 - digits.len() as u32);
        let n = digits.len().saturating_sub(1);
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_round_trips_known_values() {
        assert_eq!(super::base64_decode("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(super::base64_decode("aGk=").unwrap(), b"hi");
        assert_eq!(super::base64_decode("YWJj").unwrap(), b"abc");
        assert!(super::base64_decode("a$==").is_err());
    }
}
