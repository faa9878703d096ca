//! Each tool's serde `Args` against the JSON Schema it reports (`definitions()`, what hosts and
//! models see): the two are written by hand, side by side, and must not drift. The tool is run
//! on arguments built from its schema with the schema check skipped, so what answers is serde:
//! every argument the schema lists is accepted, at the type it gives; an argument the schema
//! requires is required; an unknown one is refused naming exactly the schema's arguments.
//! (`__test__/tool-args-drift.test.ts` pins `ts/types.ts`'s `ToolArgs` to the same schemas.)

use std::collections::BTreeSet;

use serde_json::{json, Map, Value};

use super::Exposed;
use crate::call::{Call, CallContext, Failure};
use crate::error::ErrorCode;
use crate::testing::TestWorkspace;

/// Which arguments an example gives.
#[derive(Clone, Copy)]
enum Given {
    /// Only the required ones (at every depth).
    Required,
    /// Every one the schema lists.
    All,
}

/// A value the schema accepts: the first of an `enum`, the `minimum` of an integer, one item of
/// an array; a string is `name`, the argument's own name (so that two paths differ).
fn example(schema: &Value, name: &str, given: Given) -> Value {
    if let Some(first) = schema["enum"].get(0) {
        return first.clone();
    }
    match schema["type"].as_str() {
        Some("string") => json!(name),
        Some("integer") | Some("number") => {
            schema["minimum"].as_u64().map_or(json!(1), Value::from)
        }
        Some("boolean") => json!(true),
        Some("array") => json!([example(&schema["items"], name, given)]),
        Some("object") => Value::Object(object_example(schema, given)),
        other => panic!("no example for a schema of type {other:?}: {schema}"),
    }
}

fn object_example(schema: &Value, given: Given) -> Map<String, Value> {
    let required = required(schema);
    properties(schema)
        .iter()
        .filter(|(name, _)| matches!(given, Given::All) || required.contains(name.as_str()))
        .map(|(name, property)| (name.clone(), example(property, name, given)))
        .collect()
}

fn properties(schema: &Value) -> Map<String, Value> {
    schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default()
}

fn required(schema: &Value) -> BTreeSet<String> {
    let list = schema["required"].as_array().cloned().unwrap_or_default();
    list.iter()
        .map(|name| name.as_str().unwrap().to_owned())
        .collect()
}

/// Runs `tool` on `args` without the dispatcher's schema check: only the tool's own parsing
/// (serde) can refuse them as arguments. Nobody is asked (no confirmer).
async fn run(ws: &TestWorkspace, tool: &Exposed, args: Value) -> Option<String> {
    let toolset = &ws.toolset;
    let call = Call::new(
        toolset.ws.clone(),
        tool.name.clone(),
        toolset.names.clone(),
        toolset.ws.options().permissions,
        CallContext::default(),
    );
    match (tool.spec.run)(&call, args).await {
        Err(Failure::Error(e)) if e.code == ErrorCode::InvalidArguments => Some(e.message),
        _ => None,
    }
}

/// What `tools::parse_args` says of arguments serde refused (after `<field>: `), as opposed to a
/// check the tool makes of values it parsed (`source and destination are the same path`).
const SERDE_REFUSALS: [&str; 8] = [
    "is required",
    "unknown argument;",
    "must not be null",
    "invalid type",
    "invalid value",
    "invalid length",
    "unknown variant",
    "duplicate field",
];

/// A refusal by `tools::parse_args` (serde), not by a check the tool makes of a parsed value.
fn refused_by_serde(tool: &str, message: &Option<String>) -> bool {
    message.as_deref().is_some_and(|m| {
        if m.starts_with(&format!("{tool}: arguments must be")) {
            return true;
        }
        let Some(rest) = m.strip_prefix(&format!("{tool}: invalid arguments: ")) else {
            return false;
        };
        rest.split_once(": ")
            .is_some_and(|(_, said)| SERDE_REFUSALS.iter().any(|r| said.starts_with(r)))
    })
}

/// The argument names a serde "unknown argument" message lists.
fn listed(message: &str) -> BTreeSet<String> {
    let (_, list) = message
        .split_once("unknown argument; ")
        .unwrap_or_else(|| panic!("not an unknown-argument message: {message}"));
    list.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect()
}

/// Where, in an example built with [`object_example`], each object schema sits: `[]` for the
/// arguments themselves, `["edits", 0]` for an edit; with that object's schema.
fn objects(schema: &Value, at: Vec<Value>, out: &mut Vec<(Vec<Value>, Value)>) {
    out.push((at.clone(), schema.clone()));
    for (name, property) in properties(schema) {
        let mut inner = at.clone();
        inner.push(json!(name));
        match property["type"].as_str() {
            Some("object") => objects(&property, inner, out),
            Some("array") if property["items"]["type"] == "object" => {
                inner.push(json!(0));
                objects(&property["items"], inner, out);
            }
            _ => {}
        }
    }
}

/// The object at `at` inside `args`, if the example has it.
fn object_at<'a>(args: &'a mut Value, at: &[Value]) -> Option<&'a mut Map<String, Value>> {
    let mut here = args;
    for step in at {
        here = match step {
            Value::String(key) => here.get_mut(key.as_str())?,
            Value::Number(i) => here.get_mut(i.as_u64()? as usize)?,
            _ => return None,
        };
    }
    here.as_object_mut()
}

#[tokio::test]
async fn every_tool_parses_exactly_the_arguments_its_schema_lists() {
    let ws = TestWorkspace::new();
    assert_eq!(ws.toolset.tools.len(), crate::tools::ALL.len());
    for tool in &ws.toolset.tools {
        let name = tool.name.as_str();
        for given in [Given::Required, Given::All] {
            let args = example(&tool.schema, name, given);
            let refused = run(&ws, tool, args.clone()).await;
            assert!(
                !refused_by_serde(name, &refused),
                "{name}: the schema accepts {args}, its Args refuse it: {refused:?}"
            );
        }
        let mut found = Vec::new();
        objects(&tool.schema, Vec::new(), &mut found);
        for (at, schema) in found {
            let mut args = example(&tool.schema, name, Given::All);
            object_at(&mut args, &at)
                .expect("the example has every object")
                .insert("zzNotAnArgument".to_owned(), json!(1));
            let refused = run(&ws, tool, args.clone()).await;
            let message = refused.unwrap_or_else(|| panic!("{name}: {args} was not refused"));
            let expected: BTreeSet<String> = properties(&schema).keys().cloned().collect();
            if expected.is_empty() {
                assert!(
                    message.contains("this tool takes no arguments"),
                    "{name}: {message}"
                );
            } else {
                assert_eq!(listed(&message), expected, "{name} at {at:?}: {message}");
            }
            for field in required(&schema) {
                let mut args = example(&tool.schema, name, Given::Required);
                object_at(&mut args, &at)
                    .expect("the example has every required object")
                    .remove(&field);
                let refused = run(&ws, tool, args.clone()).await;
                assert!(
                    refused
                        .as_deref()
                        .is_some_and(|m| m.contains(&format!("{field}: is required"))),
                    "{name}: {field} is required by the schema, its Args take {args}: {refused:?}"
                );
            }
        }
    }
}
