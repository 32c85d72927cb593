//! Which HSA runtime a bench child really ran. A child over the library given with
//! `--rocr-library` loads it by path, but a figure is worth something only if that file, and no
//! other runtime, was mapped: the child reports the `libhsa-runtime64*` and `libhsakmt*` files
//! of its `/proc/self/maps` ([`super::rocr::runtime_files`]), and these checks turn a child
//! that ran something else into an unavailable side that says what it ran.

use std::path::Path;

use super::figures::Outcome;

/// The file ROCr's name is looked up under in a directory.
const SONAME: &str = "libhsa-runtime64.so.1";

/// The library file `asked` names (a `libhsa-runtime64.so.1`, or a directory holding one),
/// symbolic links resolved as `/proc/self/maps` shows them; why not where it does not exist.
pub fn resolve(asked: &str) -> Result<String, String> {
    let path = Path::new(asked);
    let file = if path.is_dir() {
        path.join(SONAME)
    } else {
        path.to_path_buf()
    };
    let file = file
        .canonicalize()
        .map_err(|e| format!("{}: {e}", file.display()))?;
    file.to_str()
        .map(str::to_owned)
        .ok_or_else(|| format!("{}: not a UTF-8 path", file.display()))
}

/// The library's side stays measured only if its child mapped `file` and no other HSA
/// runtime file (no ROCr, no libhsakmt).
pub fn check_library(outcome: Outcome, file: &str) -> Outcome {
    let Outcome::Measured(measured) = outcome else {
        return outcome;
    };
    let others: Vec<&str> = measured
        .loaded
        .iter()
        .map(String::as_str)
        .filter(|f| *f != file)
        .collect();
    if !measured.loaded.iter().any(|f| f == file) {
        return Outcome::Unavailable(format!(
            "the child over {file} did not map it (/proc/self/maps shows {})",
            listed(&measured.loaded)
        ));
    }
    if !others.is_empty() {
        return Outcome::Unavailable(format!(
            "the child over {file} also mapped {} (/proc/self/maps): its figures are not the \
             library's alone",
            others.join(", ")
        ));
    }
    Outcome::Measured(measured)
}

/// ROCr's side stays measured only if its child did not map the library under test (as it
/// would with `LD_LIBRARY_PATH` pointing at the library's directory).
pub fn check_rocr(outcome: Outcome, library: &str) -> Outcome {
    match outcome {
        Outcome::Measured(measured) if measured.loaded.iter().any(|f| f == library) => {
            Outcome::Unavailable(format!(
                "ROCr's child loaded the library under test, {library}, in ROCr's place \
                 (/proc/self/maps shows {}; is LD_LIBRARY_PATH pointing at it?)",
                listed(&measured.loaded)
            ))
        }
        other => other,
    }
}

fn listed(files: &[String]) -> String {
    if files.is_empty() {
        "no HSA runtime file".to_owned()
    } else {
        files.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::figures::{Measured, Samples};

    fn measured(loaded: &[&str]) -> Outcome {
        Outcome::Measured(Measured {
            samples: Samples::default(),
            detail: "x on gfx90a".into(),
            loaded: loaded.iter().map(|f| (*f).to_owned()).collect(),
        })
    }

    const OURS: &str = "/w/target/release/hsa-runtime/libhsa-runtime64.so.1";
    const ROCR: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1.5.0";
    const THUNK: &str = "/usr/lib/x86_64-linux-gnu/libhsakmt.so.1.0.6";

    #[test]
    fn the_library_alone_passes() {
        assert!(matches!(
            check_library(measured(&[OURS]), OURS),
            Outcome::Measured(_)
        ));
    }

    #[test]
    fn a_library_child_that_ran_rocr_is_said() {
        let Outcome::Unavailable(why) = check_library(measured(&[ROCR, THUNK]), OURS) else {
            panic!("measured");
        };
        assert!(
            why.contains("did not map it") && why.contains(ROCR),
            "{why}"
        );
        let Outcome::Unavailable(why) = check_library(measured(&[OURS, THUNK]), OURS) else {
            panic!("measured");
        };
        assert!(why.contains("also mapped") && why.contains(THUNK), "{why}");
    }

    #[test]
    fn a_rocr_child_that_ran_the_library_is_said() {
        assert!(matches!(
            check_rocr(measured(&[ROCR, THUNK]), OURS),
            Outcome::Measured(_)
        ));
        let Outcome::Unavailable(why) = check_rocr(measured(&[OURS]), OURS) else {
            panic!("measured");
        };
        assert!(why.contains("in ROCr's place"), "{why}");
    }

    #[test]
    fn a_directory_names_its_soname() {
        let dir = std::env::temp_dir().join(format!("aqueduct-loaded-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(SONAME), b"").unwrap();
        let resolved = resolve(dir.to_str().unwrap());
        let missing = resolve(dir.join("nothing").to_str().unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(resolved.unwrap().ends_with("/libhsa-runtime64.so.1"));
        assert!(missing.unwrap_err().contains("nothing"));
    }
}
