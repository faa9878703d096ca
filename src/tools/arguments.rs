//! A call's arguments checked against its tool's JSON Schema, before anything else is decided
//! (../../docs/hosts.md#the-workspace-api): in a read-only workspace, `write_file { path: 5 }` is `INVALID_ARGUMENTS`, not
//! `READ_ONLY`. The check reads the schema the model was given, so what it refuses and what the
//! schema says never drift apart; the messages name the field and say what it must be.
//!
//! It covers the subset of JSON Schema the tools use: objects with `properties`, `required` and
//! `additionalProperties: false`, strings with `minLength`, integers with `minimum`/`maximum`,
//! booleans, and arrays with `minItems` and `items`. It only looks as deep as the schema does,
//! so hostile nesting costs nothing.

use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::paths::shown::echo;

/// The longest argument name quoted back in a message.
const NAME_ECHO_CHARS: usize = 80;

/// `args` with every `null` given for an optional argument left out, at every depth `schema`
/// describes (an edit's `replaceAll`): `null` means "not given" (../../docs/hosts.md#the-workspace-api), which is how a model
/// held to strict function calling, where every argument is required, leaves one out. A `null`
/// for a required argument stays, for [`check`] to refuse.
pub fn without_null_optionals(schema: &Value, args: Value) -> Value {
    match (schema["type"].as_str(), args) {
        (Some("object"), Value::Object(given)) => {
            let required = schema["required"].as_array();
            let is_required = |name: &str| required.is_some_and(|r| r.iter().any(|n| n == name));
            let kept = given
                .into_iter()
                .filter(|(name, value)| !value.is_null() || is_required(name))
                .map(|(name, value)| {
                    let value = without_null_optionals(&schema["properties"][&name], value);
                    (name, value)
                })
                .collect();
            Value::Object(kept)
        }
        (Some("array"), Value::Array(items)) => Value::Array(
            items
                .into_iter()
                .map(|item| without_null_optionals(&schema["items"], item))
                .collect(),
        ),
        (_, args) => args,
    }
}

/// Where and how an argument does not fit its schema: `edits[0].oldString: must be a string,
/// got a number`.
struct Misfit(String);

/// `INVALID_ARGUMENTS` (prefixed with `tool`, the host's name of the tool) unless `args` fits
/// `schema`.
pub fn check(tool: &str, schema: &Value, args: &Value) -> Result<(), ToolError> {
    let fail =
        |Misfit(message)| ToolError::invalid(format!("{tool}: invalid arguments: {message}"));
    let Value::Object(given) = args else {
        return Err(ToolError::invalid(format!(
            "{tool}: the arguments must be a JSON object of named arguments, got {}",
            kind(args)
        )));
    };
    check_object(schema, given, "").map_err(fail)
}

/// The fields of `given` against an object schema; `at` is the path of the object (`edits[0].`).
fn check_object(schema: &Value, given: &Map<String, Value>, at: &str) -> Result<(), Misfit> {
    let empty = Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&empty);
    if let Some(unknown) = given.keys().find(|k| !properties.contains_key(*k)) {
        let name: String = echo(unknown).chars().take(NAME_ECHO_CHARS).collect();
        let takes = if properties.is_empty() {
            "this tool takes no arguments; call it with {}".to_owned()
        } else {
            format!("the arguments are {}", list(properties.keys()))
        };
        return Err(Misfit(format!("{at}{name}: unknown argument; {takes}")));
    }
    for (name, value) in given {
        check_value(&properties[name], value, &format!("{at}{name}"))?;
    }
    let required = schema["required"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        if !given.contains_key(name) {
            let what = properties.get(name).map_or("a value", expected);
            return Err(Misfit(format!("{at}{name}: is required; give {what}")));
        }
    }
    Ok(())
}

/// One value against its schema; `at` names it (`path`, `edits[0].oldString`).
fn check_value(schema: &Value, value: &Value, at: &str) -> Result<(), Misfit> {
    let wrong = || {
        Misfit(format!(
            "{at}: must be {}, got {}",
            expected(schema),
            kind(value)
        ))
    };
    let number = |key: &str| schema.get(key).and_then(Value::as_i64);
    match schema["type"].as_str() {
        Some("string") => {
            let text = value.as_str().ok_or_else(wrong)?;
            if text.is_empty() && number("minLength").is_some_and(|n| n > 0) {
                return Err(Misfit(format!("{at}: must not be empty")));
            }
        }
        Some("boolean") => {
            value.as_bool().ok_or_else(wrong)?;
        }
        Some("integer") => {
            let n = match value {
                Value::Number(n) if n.is_i64() || n.is_u64() => n.as_i64().unwrap_or(i64::MAX),
                _ => return Err(wrong()),
            };
            if let Some(min) = number("minimum").filter(|min| n < *min) {
                return Err(Misfit(format!("{at}: must be at least {min}, got {n}")));
            }
            if let Some(max) = number("maximum").filter(|max| n > *max) {
                return Err(Misfit(format!("{at}: must be at most {max}, got {n}")));
            }
        }
        Some("array") => {
            let items = value.as_array().ok_or_else(wrong)?;
            if let Some(min) = number("minItems").filter(|min| (items.len() as i64) < *min) {
                return Err(Misfit(format!(
                    "{at}: must have at least {min} item{}, got {}",
                    if min == 1 { "" } else { "s" },
                    items.len()
                )));
            }
            for (i, item) in items.iter().enumerate() {
                check_value(&schema["items"], item, &format!("{at}[{i}]"))?;
            }
        }
        Some("object") => {
            let fields = value.as_object().ok_or_else(wrong)?;
            check_object(schema, fields, &format!("{at}."))?;
        }
        _ => {}
    }
    Ok(())
}

/// What a schema asks for, as a message says it: `a string`, `an array of objects`.
fn expected(schema: &Value) -> &'static str {
    match schema["type"].as_str() {
        Some("string") => "a string",
        Some("boolean") => "a boolean (true or false)",
        Some("integer") => "an integer",
        Some("array") if schema["items"]["type"] == "object" => "an array of objects",
        Some("array") => "an array",
        Some("object") => "an object",
        _ => "a value",
    }
}

/// What the model gave, as a message says it.
pub fn kind(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) if n.is_f64() => format!("the number {n}"),
        Value::Number(n) => format!("the integer {n}"),
        Value::String(_) => "a string".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

/// `` `a` ``, `` `a` and `b` ``, `` `a`, `b` and `c` ``.
fn list<'a>(names: impl Iterator<Item = &'a String>) -> String {
    let names: Vec<String> = names.map(|n| format!("`{n}`")).collect();
    match names.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::{object_schema, ALL};
    use serde_json::json;

    fn read_file_schema() -> Value {
        object_schema(
            json!({
                "path": { "type": "string", "minLength": 1 },
                "startLine": { "type": "integer", "minimum": 1 },
                "recursive": { "type": "boolean" },
            }),
            &["path"],
        )
    }

    fn message(args: Value) -> String {
        check("read_file", &read_file_schema(), &args)
            .unwrap_err()
            .message
    }

    #[test]
    fn each_problem_names_the_field_and_what_it_must_be() {
        let cases = [
            (json!({}), "read_file: invalid arguments: path: is required; give a string"),
            (json!({ "path": 5 }), "read_file: invalid arguments: path: must be a string, got the integer 5"),
            (json!({ "path": "" }), "read_file: invalid arguments: path: must not be empty"),
            (json!({ "path": "a", "startLine": -1 }), "read_file: invalid arguments: startLine: must be at least 1, got -1"),
            (json!({ "path": "a", "startLine": 1.5 }), "read_file: invalid arguments: startLine: must be an integer, got the number 1.5"),
            (json!({ "path": "a", "startLine": "3" }), "read_file: invalid arguments: startLine: must be an integer, got a string"),
            (json!({ "path": null }), "read_file: invalid arguments: path: must be a string, got null"),
            (json!({ "path": "a", "bogus": 1 }), "read_file: invalid arguments: bogus: unknown argument; the arguments are `path`, `startLine` and `recursive`"),
            (json!([1]), "read_file: the arguments must be a JSON object of named arguments, got an array"),
        ];
        for (args, expected) in cases {
            assert_eq!(message(args.clone()), expected, "{args}");
        }
        assert!(check(
            "read_file",
            &read_file_schema(),
            &json!({ "path": "a", "startLine": 3 })
        )
        .is_ok());
    }

    /// `null` is "not given" for an optional argument, at any depth; a required one stays null.
    #[test]
    fn null_optional_arguments_are_left_out() {
        let edit = ALL.iter().find(|t| t.name == "edit_file").unwrap();
        let schema = (edit.schema)();
        let strict_shaped = json!({ "path": "a", "edits": [{ "oldString": "x", "newString": "y", "replaceAll": null }] });
        assert_eq!(
            without_null_optionals(&schema, strict_shaped),
            json!({ "path": "a", "edits": [{ "oldString": "x", "newString": "y" }] })
        );
        let read = read_file_schema();
        let args = json!({ "path": "a", "startLine": null, "recursive": null });
        assert_eq!(without_null_optionals(&read, args), json!({ "path": "a" }));
        let required = json!({ "path": null, "startLine": null });
        assert_eq!(
            without_null_optionals(&read, required),
            json!({ "path": null })
        );
    }

    #[test]
    fn a_tool_without_arguments_says_so() {
        let schema = object_schema(json!({}), &[]);
        let e = check("cwd_get", &schema, &json!({ "path": "." })).unwrap_err();
        assert_eq!(
            e.message,
            "cwd_get: invalid arguments: path: unknown argument; this tool takes no arguments; call it with {}"
        );
    }

    #[test]
    fn nested_items_are_checked_and_named() {
        let edit = ALL.iter().find(|t| t.name == "edit_file").unwrap();
        let schema = (edit.schema)();
        let m = |args: Value| check("edit_file", &schema, &args).unwrap_err().message;
        assert!(m(json!({ "path": "a", "edits": [] }))
            .ends_with("edits: must have at least 1 item, got 0"));
        assert!(
            m(json!({ "path": "a", "edits": [{ "oldString": "", "newString": "b" }] }))
                .ends_with("edits[0].oldString: must not be empty")
        );
        assert!(m(json!({ "path": "a", "edits": [{ "oldString": "a", "newString": "b" }, { "oldString": "a" }] }))
            .ends_with("edits[1].newString: is required; give a string"));
        assert!(m(json!({ "path": "a", "edits": [{ "oldString": "a", "newString": "b", "all": true }] }))
            .ends_with("edits[0].all: unknown argument; the arguments are `oldString`, `newString` and `replaceAll`"));
        assert!(m(json!({ "path": "a", "edits": "x" }))
            .ends_with("edits: must be an array of objects, got a string"));
    }

    #[test]
    fn an_unknown_name_is_quoted_escaped_and_short() {
        let long = format!("\u{1b}[31m{}", "k".repeat(500));
        let e = message(json!({ "path": "a", long: 1 }));
        assert!(e.contains("\\x1b[31mkkk"), "{e}");
        assert!(e.len() < 300, "{e}");
    }
}
