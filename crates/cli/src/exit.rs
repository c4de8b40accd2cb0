//! Exit codes, and the few helpers every command uses to end: a
//! [`Failure`] carries its exit code and one-line message; [`write_out`]
//! writes stdout so that a closed pipe ends quietly.
//!
//! Exit codes: 0 success; 1 internal error; 2 bad usage or unreadable /
//! malformed input; 3 the report is impossible for this program; 4 a
//! solver comparison failed.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

/// A failure with its exit code and a message for stderr.
pub struct Failure {
    /// The exit code.
    pub code: u8,
    /// The message (one line).
    pub message: String,
}

impl Failure {
    /// Bad usage or input: exit code 2.
    pub fn input(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: 2,
            message: message.to_string(),
        }
    }
    /// The report is impossible for this program: exit code 3.
    pub fn impossible(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: 3,
            message: message.to_string(),
        }
    }
    /// An internal error: exit code 1.
    pub fn internal(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: 1,
            message: message.to_string(),
        }
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Failure {
        Failure::internal(format!("cannot write output: {e}"))
    }
}

/// Milliseconds since `since`.
pub fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1e3
}

/// Writes to stdout through a buffer; a closed pipe ends quietly.
pub fn write_out(f: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> Result<(), Failure> {
    let stdout = std::io::stdout();
    let mut lock = std::io::BufWriter::new(stdout.lock());
    match f(&mut lock).and_then(|_| lock.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure {
            code: 0,
            message: String::new(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// The process's exit code for a command's result; a failure's message
/// goes to stderr.
pub fn exit_code(result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // A closed pipe (`postmortem ... | head`) is not an error.
            if !f.message.is_empty() {
                eprintln!("postmortem: {}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}
