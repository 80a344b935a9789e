//! The crate over the real host (libcx): every answer arrives once, as (tag, Reply),
//! with no plugin registered: the host itself answers what it does not have (H-1, H-3).
use cx::{Cx, Host, Reply};

#[derive(Debug, Clone, PartialEq)]
enum Msg {
    Answer(u32),
    Item,
}

#[test]
fn a_call_to_a_missing_plugin_is_answered_once_with_its_tag() {
    let (cx, answers) = Cx::<Msg>::new().expect("a host");
    cx.plugin("nothing", "here", "", Msg::Answer(7)).expect("dispatched");
    cx.plugin("nothing", "there", "", Msg::Answer(8)).expect("dispatched");
    cx.wait_idle().expect("idle");
    let got: Vec<(Msg, Reply)> = answers.try_iter().collect();
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].0, Msg::Answer(7));
    assert!(!got[0].1.ok && got[0].1.text.contains("nothing"), "{:?}", got[0].1);
    assert_eq!(got[1].0, Msg::Answer(8));
}

#[test]
fn a_stream_of_a_missing_plugin_gets_one_refusal_then_its_end() {
    let (cx, answers) = Cx::<Msg>::new().expect("a host");
    cx.subscribe("k", "nothing", "events", "", Msg::Item).expect("dispatched");
    cx.wait_idle().expect("idle");
    let got: Vec<(Msg, Reply)> = answers.try_iter().collect();
    assert_eq!(got.len(), 2, "{:?}", got);
    assert!(!got[0].1.ok && !got[0].1.end);
    assert!(got[1].1.end);
    // The stream ended: its key is gone.
    assert_eq!(cx.unsubscribe("k"), Ok(false));
}

#[test]
fn an_answer_after_the_receiver_is_dropped_goes_nowhere_and_nothing_breaks() {
    let (cx, answers) = Cx::<Msg>::new().expect("a host");
    drop(answers);
    cx.plugin("nothing", "here", "", Msg::Answer(1)).expect("dispatched");
    cx.wait_idle().expect("idle");
}
