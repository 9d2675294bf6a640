//! Records `git describe` at build time so lab reports can name the program
//! version exactly (`MPQUIC_GIT_DESCRIBE`). Without git, or outside a
//! repository, the variable is simply not set: the build never fails.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn main() {
    println!("cargo:rerun-if-env-changed=MPQUIC_GIT_DESCRIBE");
    // Rerun when HEAD moves (a commit or a checkout), not on every build.
    for path in [
        git(&["rev-parse", "--git-path", "HEAD"]),
        git(&["symbolic-ref", "-q", "HEAD"]).and_then(|r| git(&["rev-parse", "--git-path", &r])),
    ]
    .into_iter()
    .flatten()
    {
        if std::path::Path::new(&path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
    if let Some(d) = git(&["describe", "--tags", "--always"]) {
        println!("cargo:rustc-env=MPQUIC_GIT_DESCRIBE={d}");
    }
}
