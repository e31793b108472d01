//! What an option is: its names, value type, default, help and reader.

use super::JobOptions;
use super::engines::is_fio_engine;
use crate::units::ValueError;

/// The type of an option's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Free text.
    Text,
    /// 0/1; a bare option (`time_based`) means 1.
    Bool,
    /// A whole number.
    Int,
    /// Bytes, with fio's suffixes.
    Size,
    /// A duration; bare numbers are seconds.
    Time,
    /// Text that may be left out (`write_lat_log` alone: the job's name).
    OptionalText,
    /// One of a fixed list of words.
    Choice(&'static [&'static str]),
}

impl Kind {
    fn describe(self) -> String {
        match self {
            Kind::Text => "text".into(),
            Kind::OptionalText => "text, optional".into(),
            Kind::Bool => "boolean".into(),
            Kind::Int => "integer".into(),
            Kind::Size => "size".into(),
            Kind::Time => "time".into(),
            Kind::Choice(words) => words.join("|"),
        }
    }
}

/// One option: its names, value type, default and what it does.
#[derive(Debug)]
pub struct OptionDef {
    /// fio's name.
    pub name: &'static str,
    /// Other names fio accepts.
    pub aliases: &'static [&'static str],
    /// Value type.
    pub kind: Kind,
    /// Default as fio prints it ("" for none).
    pub default: &'static str,
    /// One-line help.
    pub help: &'static str,
    pub(super) apply: fn(&mut JobOptions, &str) -> Result<(), ValueError>,
}

impl OptionDef {
    /// Reads `value` and stores it in `job`. A bare boolean passes "1".
    pub fn apply(&self, job: &mut JobOptions, value: &str) -> Result<(), ValueError> {
        // `rw=write:4k` is a known word with fio's offset modifier: the
        // option's own reader says what it makes of the modifier.
        let word = match self.name {
            "rw" => value.trim().split(':').next().unwrap_or_default(),
            _ => value.trim(),
        };
        if let Kind::Choice(words) = self.kind
            && !words.contains(&word)
        {
            if self.name == "ioengine" && is_fio_engine(value.trim()) {
                let engine = value.trim();
                return Err(ValueError::Unsupported(
                    match super::engines::needs(engine) {
                        Some(needs) => format!(
                            "engine '{engine}' needs {needs}; hybrio runs {}",
                            words.join(", ")
                        ),
                        None => format!(
                            "engine '{engine}' is not supported by hybrio (its engines: {})",
                            words.join(", ")
                        ),
                    },
                ));
            }
            return Err(ValueError::Choice {
                value: value.to_string(),
                allowed: words.join(", "),
            });
        }
        (self.apply)(job, value.trim())
    }

    /// The option's line in `--cmdhelp`.
    pub fn help_line(&self) -> String {
        let mut line = format!("{:<28} {}", self.name, self.help);
        line.push_str(&format!(" [{}", self.kind.describe()));
        if !self.default.is_empty() {
            line.push_str(&format!(", default {}", self.default));
        }
        if !self.aliases.is_empty() {
            line.push_str(&format!(", alias {}", self.aliases.join(", ")));
        }
        line.push(']');
        line
    }
}

macro_rules! opt {
    ($name:literal, $aliases:expr, $kind:expr, $default:literal, $help:literal, |$job:ident, $v:ident| $body:expr) => {
        OptionDef {
            name: $name,
            aliases: $aliases,
            kind: $kind,
            default: $default,
            help: $help,
            apply: |$job: &mut JobOptions, $v: &str| {
                $body;
                Ok(())
            },
        }
    };
}
pub(super) use opt;
