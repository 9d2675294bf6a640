//! Output paths are checked before the work starts, so that a typo in `--json` costs nothing
//! instead of the result of a long run.

use std::io::ErrorKind;
use std::path::Path;

use crate::error::LabError;

/// Checks that the file `path`, given with option `key`, can be written: an existing file
/// must be writable (it is not modified), a new one must be creatable in an existing
/// directory (it is created and removed again). `-` (standard output) is always fine.
pub fn check_writable(key: &str, path: &Path) -> Result<(), LabError> {
    if path.as_os_str() == "-" {
        return Ok(());
    }
    let fail = |why: String| LabError::Output {
        key: key.to_owned(),
        path: path.to_owned(),
        why,
    };
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(fail("it is a directory".to_owned())),
        // Opening without truncation checks permission and leaves the contents alone.
        Ok(_) => std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map(drop)
            .map_err(|e| fail(e.to_string())),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let dir = match path.parent() {
                Some(dir) if !dir.as_os_str().is_empty() => dir,
                _ => Path::new("."),
            };
            if !dir.is_dir() {
                return Err(fail(format!("directory {} does not exist", dir.display())));
            }
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .map_err(|e| fail(e.to_string()))?;
            std::fs::remove_file(path).map_err(|e| fail(e.to_string()))
        }
        Err(e) => Err(fail(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_paths_pass_and_leave_no_trace() {
        let dir = tempfile::tempdir().expect("temp dir");
        let new = dir.path().join("new.json");
        check_writable("--json", &new).expect("new file in an existing directory");
        assert!(!new.exists(), "the probe file is removed");
        let old = dir.path().join("old.json");
        std::fs::write(&old, "kept").expect("write");
        check_writable("--json", &old).expect("existing file");
        assert_eq!(std::fs::read_to_string(&old).expect("read"), "kept");
        check_writable("--json", Path::new("-")).expect("stdout");
    }

    #[test]
    fn unwritable_paths_are_named() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("no/such/dir/out.json");
        let err = check_writable("--json", &missing).expect_err("missing directory");
        let text = err.to_string();
        assert!(
            text.starts_with("--json ") && text.contains("does not exist"),
            "{text}"
        );
        let err = check_writable("--json", dir.path()).expect_err("a directory");
        assert!(err.to_string().contains("is a directory"), "{err}");
        assert!(err.is_input());
    }
}
