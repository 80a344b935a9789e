//! The seed's booking app, as a Mobiler core over the `cx` crate (the push plugin's
//! README, `../shared/seeds/003…`): subscribe to push events at startup, register and
//! POST the token to the backend, refresh the list in place on `received`, navigate to
//! the booking only on `opened`, and POST the token again on `token_refresh`.
//!
//! The core is written against `cx::Host`, so its tests run it on a simulated phone of
//! the headless world (`tests/seed_checks.rs`) exactly as the app runs it on a real one.

use cx::{json, Error, Host, Reply};

/// What the core receives: each answer or event comes back as the message its request
/// was tagged with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    PushToken(Reply),
    PushEvent(Reply),
}

/// A request's tag: the message its answer becomes (`Msg::PushToken`).
pub type Tag = fn(Reply) -> Msg;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Screen {
    Bookings,
    Booking(String),
}

/// The app's state: the screen, how often the list was reloaded in place, the badge,
/// and every token POSTed to the backend, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Model {
    pub screen: Screen,
    pub reloads: u32,
    pub badge: u32,
    pub posted: Vec<String>,
}

pub struct Core<H: Host<Tag>> {
    host: H,
    pub model: Model,
}

impl<H: Host<Tag>> Core<H> {
    pub fn new(host: H) -> Core<H> {
        Core { host, model: Model { screen: Screen::Bookings, reloads: 0, badge: 0, posted: Vec::new() } }
    }

    /// At startup: subscribe first, so a tap that launched the app is not missed, then
    /// register for the token.
    pub fn start(&mut self) -> Result<(), Error> {
        self.host.subscribe("push", "push", "events", "", Msg::PushEvent)?;
        self.host.plugin("push", "register", "", Msg::PushToken)
    }

    pub fn update(&mut self, msg: Msg) {
        match msg {
            Msg::PushToken(reply) => {
                if reply.ok {
                    if let Some(token) = json::field(&reply.text, "token") {
                        self.post_token(token);
                    }
                }
            }
            Msg::PushEvent(reply) => {
                if !reply.ok || reply.end {
                    return;
                }
                if json::field(&reply.text, "type").as_deref() == Some("token_refresh") {
                    if let Some(token) = json::field(&reply.text, "token") {
                        self.post_token(token);
                    }
                    return;
                }
                match json::field(&reply.text, "mobiler_push").as_deref() {
                    // Navigate only on opened: the user tapped this booking's notification.
                    Some("opened") => {
                        let booking = json::field(&reply.text, "booking_id").unwrap_or_default();
                        self.model.screen = Screen::Booking(booking);
                    }
                    // Refresh in place on received: never move the user mid-task.
                    Some("received") => {
                        self.model.reloads += 1;
                        self.model.badge += 1;
                    }
                    _ => {}
                }
            }
        }
    }

    /// "POST" `{token, tenant, platform}` to the backend: recorded, as the effect a
    /// real app's `cx.post` would carry out.
    fn post_token(&mut self, token: String) {
        self.model.posted.push(token);
    }
}
