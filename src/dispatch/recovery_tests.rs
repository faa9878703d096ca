use super::*;
use crate::datadir::DataDir;
use crate::hashing::sha256_hex;
use crate::journal::{Journal, Record, TempRecord};
use serde_json::json;
use std::fs;
use std::path::Path;
use std::sync::Arc;

/// A move between file systems that a crash cut short left its temp tree and its journal
/// record; the next workspace removes both in the background, and its first call waits.
#[tokio::test]
async fn the_first_call_waits_for_the_recovery_begun_in_the_background() {
    let tmp = tempfile::tempdir().unwrap();
    let base = crate::paths::canonical::canonicalize_existing(tmp.path()).unwrap();
    let (root, data) = (base.join("root"), base.join("data"));
    let temp_name = ".moved.4294967294.0.agent-fs-tools.tmp";
    let temp = root.join(temp_name);
    for d in 0..20 {
        fs::create_dir_all(temp.join(format!("d{d}"))).unwrap();
        for f in 0..20 {
            fs::write(temp.join(format!("d{d}/f{f}")), "copied").unwrap();
        }
    }
    let meta = crate::paths::testing::stat(&root).unwrap();
    let dead_pid = u32::MAX - 1;
    let record = Record::Temp(TempRecord {
        dir: root.clone(),
        dir_dev: meta.dev,
        dir_ino: meta.ino,
        name: temp_name.into(),
        pid: dead_pid,
        made_dirs: Vec::new(),
        counters_below: None,
    });
    let root_hash = sha256_hex(root.as_os_str().as_encoded_bytes());
    fs::create_dir_all(&data).unwrap();
    let journal = Journal::new(
        Arc::new(DataDir::new(data.clone())),
        Path::new("journal").join(root_hash),
    );
    let record_file = journal.dir().join(format!("{dead_pid}-1.json"));
    journal.rewrite(&record_file, &serde_json::to_vec(&record).unwrap());

    let toolset = Toolset::new(&json!({ "root": root, "trash": { "dataDir": data } })).unwrap();
    let args = json!({ "path": "." });
    let result = toolset
        .call("list_directory", args, CallContext::default())
        .await;
    assert_eq!(result.status, "ok", "{}", result.output);
    assert!(
        toolset.workspace().is_recovered(),
        "the call ran before recovery had finished"
    );
    assert!(!temp.exists() && !record_file.exists());
    toolset.workspace().recovered().await; // at once, now
}
