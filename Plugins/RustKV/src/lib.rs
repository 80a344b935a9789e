//! `store`, a plugin written in Rust and loaded into cxshell (`--plugin librustkv.so`):
//!
//!   op  set      input {"key":"k","value":"v"} -> {"key":"k","previous":"old"} (or null)
//!   op  get      input {"key":"k"}             -> {"key":"k","value":"v"} (or null)
//!   stream changes                             -> {"key":"k","value":"v"} for every later set
//!
//! Values are strings. Bad input is answered ok = false with a sentence naming the problem.

use cx::json;
use cx::plugin::{Answer, Emitter, EmitterId, Plugin, Registrar};
use std::collections::HashMap;
use std::sync::Mutex;

#[derive(Default)]
struct Store {
    values: Mutex<HashMap<String, String>>,
    watchers: Mutex<Vec<Emitter>>,
}

fn text_or_null(value: Option<&String>) -> String {
    value.map(|v| json::string(v)).unwrap_or_else(|| "null".to_string())
}

impl Plugin for Store {
    fn call(&self, op: &str, input: &str, answer: Answer) {
        let key = match json::field(input, "key") {
            Some(key) => key,
            None => {
                let _ = answer.send(false, r#"the input needs "key", a string: {"key":"k"}"#);
                return;
            }
        };
        match op {
            "get" => {
                let values = self.values.lock().unwrap();
                let text = format!(r#"{{"key":{},"value":{}}}"#, json::string(&key), text_or_null(values.get(&key)));
                let _ = answer.send(true, &text);
            }
            "set" => {
                let value = match json::field(input, "value") {
                    Some(value) => value,
                    None => {
                        let _ = answer.send(false, r#"set needs "value", a string: {"key":"k","value":"v"}"#);
                        return;
                    }
                };
                let previous = self.values.lock().unwrap().insert(key.clone(), value.clone());
                let change = json::object(&[("key", &key), ("value", &value)]);
                // Ended streams' emitters go; the rest get the change.
                self.watchers.lock().unwrap().retain(|watcher| watcher.emit(true, &change).is_ok());
                let text = format!(r#"{{"key":{},"previous":{}}}"#, json::string(&key), text_or_null(previous.as_ref()));
                let _ = answer.send(true, &text);
            }
            _ => {
                let _ = answer.send(false, "store has no such op");
            }
        }
    }

    fn start_stream(&self, _stream: &str, _input: &str, emitter: Emitter) {
        self.watchers.lock().unwrap().push(emitter);
    }

    fn stop_stream(&self, emitter: EmitterId) {
        self.watchers.lock().unwrap().retain(|watcher| watcher.id() != emitter);
    }
}

cx::export_plugin!(|host: &Registrar| host.register("store", &["get", "set"], &["changes"], Store::default()));
