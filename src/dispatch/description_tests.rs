use super::*;
use serde_json::json;

/// Whether `text` has `word` with no letter, digit or `_` right before or after it.
fn has_word(text: &str, word: &str) -> bool {
    let is_name = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
    text.match_indices(word).any(|(at, _)| {
        !is_name(text[..at].chars().next_back()) && !is_name(text[at + word.len()..].chars().next())
    })
}

/// Every text of the definitions a model reads: descriptions and argument descriptions.
fn texts(definitions: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for def in definitions.as_array().unwrap() {
        let name = def["name"].as_str().unwrap().to_owned();
        out.push((
            name.clone(),
            def["description"].as_str().unwrap().to_owned(),
        ));
        for (arg, schema) in def["inputSchema"]["properties"].as_object().unwrap() {
            let text = schema["description"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            out.push((format!("{name}.{arg}"), text));
        }
    }
    out
}

/// No description names a tool the model cannot call by that name: renamed (Tomo calls
/// delete_file remove_file), disabled, or hidden by readOnly.
#[test]
fn descriptions_name_only_the_tools_offered() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().display().to_string();
    let data = tmp.path().join("data");
    let all_renamed: serde_json::Map<String, Value> = tools::names()
        .into_iter()
        .map(|n| (n.to_owned(), json!({ "name": format!("x_{n}") })))
        .collect();
    let configs = [
        json!({}),
        json!({ "tools": { "delete_file": { "name": "remove_file" } } }),
        json!({ "tools": { "glob": { "enabled": false }, "restore_file": { "enabled": false } } }),
        json!({ "readOnly": true }),
        json!({ "tools": all_renamed }),
    ];
    for config in configs {
        let mut options = config.clone();
        options["root"] = json!(root);
        options["trash"] = json!({ "dataDir": data });
        let toolset = Toolset::new(&options).unwrap();
        let definitions = toolset.definitions();
        let offered: Vec<&str> = definitions
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        for original in tools::names() {
            if offered.contains(&original) {
                continue;
            }
            for (whose, text) in texts(&definitions) {
                assert!(
                    !has_word(&text, original),
                    "{config}: {whose} names {original}, which is not offered: {text}"
                );
            }
        }
    }
}

/// The Tomo rename, and the hints that depend on what is offered.
#[test]
fn descriptions_use_the_host_s_names() {
    let tmp = tempfile::tempdir().unwrap();
    let toolset = Toolset::new(&json!({
        "root": tmp.path(),
        "trash": { "dataDir": tmp.path().join("data") },
        "tools": { "delete_file": { "name": "remove_file" } },
    }))
    .unwrap();
    let definitions = toolset.definitions();
    let description = |name: &str| {
        definitions
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["name"] == name)
            .map(|d| d["description"].as_str().unwrap().to_owned())
            .unwrap()
    };
    assert!(
        description("remove_dir").contains("For a file use remove_file."),
        "{}",
        description("remove_dir")
    );
    assert!(description("remove_file").contains("For a directory use remove_dir."));
    assert!(description("trash_list").contains("(to pass to restore_file)"));
}

#[test]
fn every_description_is_short_and_says_first_when_to_use_the_tool() {
    let tmp = tempfile::tempdir().unwrap();
    let toolset = Toolset::new(&json!({
        "root": tmp.path(),
        "trash": { "dataDir": tmp.path().join("data") },
    }))
    .unwrap();
    let mut wrong = Vec::new();
    for def in toolset.definitions().as_array().unwrap() {
        let text = def["description"].as_str().unwrap();
        // apply_patch shows the format it takes, which models need more than brevity.
        let max = if def["name"] == "apply_patch" {
            1200
        } else {
            800
        };
        if !(60..=max).contains(&text.len()) {
            wrong.push(format!("{}: {} bytes", def["name"], text.len()));
        }
        let first = text.split(". ").next().unwrap();
        if first.len() >= 160 {
            wrong.push(format!("{}: {first}", def["name"]));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
