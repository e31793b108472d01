//! fio's json.c printer: `"key" : value` pairs, two spaces of indent per
//! level, floats as `%f`, keys in insertion order.

use std::fmt::Write as _;

/// A JSON value, printed the way fio's json.c prints it.
pub(super) enum Json {
    Int(i128),
    Float(f64),
    Str(String),
    Raw(String),
    Obj(Obj),
    Arr(Vec<Json>),
}

impl Json {
    pub(super) fn from_serde(v: &serde_json::Value) -> Json {
        match v {
            serde_json::Value::Object(map) => Json::Obj(Obj(map
                .iter()
                .map(|(k, v)| (k.clone(), Json::from_serde(v)))
                .collect())),
            serde_json::Value::Array(a) => Json::Arr(a.iter().map(Json::from_serde).collect()),
            serde_json::Value::String(s) => Json::Str(s.clone()),
            other => Json::Raw(other.to_string()),
        }
    }
}

/// An object with keys in insertion order.
#[derive(Default)]
pub(super) struct Obj(pub(super) Vec<(String, Json)>);

impl Obj {
    pub(super) fn push(&mut self, key: &str, value: Json) {
        self.0.push((key.to_string(), value));
    }
    pub(super) fn int(&mut self, key: &str, v: i128) {
        self.push(key, Json::Int(v));
    }
    pub(super) fn uint(&mut self, key: &str, v: u64) {
        self.push(key, Json::Int(i128::from(v)));
    }
    pub(super) fn float(&mut self, key: &str, v: f64) {
        self.push(key, Json::Float(v));
    }
    /// Empty values too, as fio 3.39 and later (commit 4a1f2a5b); where
    /// fio 3.33's JSON is written, the caller leaves them out.
    pub(super) fn str(&mut self, key: &str, v: &str) {
        self.push(key, Json::Str(v.to_string()));
    }
    pub(super) fn obj(&mut self, key: &str, v: Obj) {
        self.push(key, Json::Obj(v));
    }
}

fn indent(out: &mut String, level: usize) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// json.c's printer: an object's pairs and an array's elements go one level
/// deeper than the value itself, each on its own line.
pub(super) fn print_value(out: &mut String, v: &Json, level: usize) {
    match v {
        Json::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Json::Float(f) => {
            // fio prints %f; keep the document valid for non-finite values
            let f = if f.is_finite() { *f } else { 0.0 };
            let _ = write!(out, "{f:.6}");
        }
        Json::Str(s) => escape_into(out, s),
        Json::Raw(s) => out.push_str(s),
        Json::Obj(o) => {
            out.push_str("{\n");
            for (i, (k, v)) in o.0.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                escape_into(out, k);
                out.push_str(" : ");
                print_value(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push('}');
        }
        Json::Arr(a) => {
            out.push_str("[\n");
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push_str(",\n");
                }
                indent(out, level + 1);
                print_value(out, v, level + 1);
            }
            out.push('\n');
            indent(out, level);
            out.push(']');
        }
    }
}

/// A quoted string. fio escapes only `\` and `"`; control characters are
/// escaped too so that the document stays valid JSON.
fn escape_into(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    #[test]
    fn printer_formats() {
        let mut o = Obj::default();
        o.float("f", 1.0 / 3.0);
        o.float("nan", f64::NAN);
        o.int("neg", -5);
        o.push("empty", Json::Obj(Obj::default()));
        o.push(
            "arr",
            Json::Arr(vec![Json::Int(1), Json::Obj(Obj::default())]),
        );
        let mut out = String::new();
        print_value(&mut out, &Json::Obj(o), 0);
        assert_eq!(
            out,
            "{\n  \"f\" : 0.333333,\n  \"nan\" : 0.000000,\n  \"neg\" : -5,\n  \"empty\" : {\n\n  },\n  \"arr\" : [\n    1,\n    {\n\n    }\n  ]\n}"
        );
        serde_json::from_str::<Value>(&out).unwrap();
    }
}
