//! The seed's four manual checks, on iOS and on Android, with the booking core running
//! on a simulated phone of the headless world (cx_device.h): the core's own code, its
//! own requests, the push contract's real rules.
use booking_core::{Core, Screen, Tag};
use cx::world::{App, World};
use cx::{json, Reply};
use std::sync::mpsc::Receiver;

/// One phone with the booking app: the world, the device and the core's answers.
struct Phone {
    world: World,
    device: String,
    platform: &'static str,
}

impl Phone {
    fn new(platform: &'static str) -> Phone {
        let world = World::new().expect("a world");
        let device = world.device(platform).expect("a device");
        Phone { world, device, platform }
    }

    /// A line-protocol request for this phone (its user, its OS, the outside world).
    fn act(&self, op: &str, more: &str) -> String {
        let line = format!(r#"{{"op":"{}","device":"{}"{}}}"#, op, self.device, more);
        let reply = self.world.request(&line).expect("a reply");
        assert_eq!(json::flag(&reply, "ok"), Some(true), "{} answered {}", line, reply);
        reply
    }

    /// Launches the app and starts its core: what a cold start does.
    fn start(&self) -> (Core<App<'_, Tag>>, Receiver<(Tag, Reply)>) {
        let (app, answers) = self.world.app::<Tag>(&self.device);
        let mut core = Core::new(app);
        core.start().expect("the core starts");
        (core, answers)
    }

    /// A booking notification from the backend, through APNs or FCM as the platform's.
    fn push(&self, booking: &str, token: &str) {
        if self.platform == "ios" {
            self.act(
                "apns",
                &format!(
                    r#","headers":{{"apns-topic":"com.example.app","apns-push-type":"alert"}},"body":{{"aps":{{"alert":{{"title":"New booking","body":"{}"}}}},"booking_id":"{}"}}"#,
                    booking, booking
                ),
            );
        } else {
            self.act(
                "fcm",
                &format!(
                    r#","body":{{"message":{{"token":"{}","data":{{"booking_id":"{}","title":"New booking","body":"{}"}}}}}}"#,
                    token, booking, booking
                ),
            );
        }
    }
}

/// Hands every answer that arrived to the core's update, in order.
fn pump(core: &mut Core<App<'_, Tag>>, answers: &Receiver<(Tag, Reply)>) {
    for (tag, reply) in answers.try_iter() {
        core.update(tag(reply));
    }
}

fn the_four_checks(platform: &'static str) {
    let phone = Phone::new(platform);
    phone.act("launch", "");
    let (mut core, answers) = phone.start();
    pump(&mut core, &answers);
    assert_eq!(core.model.posted.len(), 1, "the token is POSTed once at startup");
    let token = core.model.posted[0].clone();

    // 1. App open, send: one received event; the list refreshes in place, no navigation.
    phone.push("b1", &token);
    pump(&mut core, &answers);
    assert_eq!(core.model.screen, Screen::Bookings);
    assert_eq!((core.model.reloads, core.model.badge), (1, 1));

    // 2. Background, send, open from the home screen: no event at all.
    phone.act("background", "");
    phone.push("b2", &token);
    phone.act("launch", "");
    pump(&mut core, &answers);
    assert_eq!((core.model.screen.clone(), core.model.reloads), (Screen::Bookings, 1));

    // 3. Background, send, tap the banner: opened, and only now the booking's screen.
    phone.act("background", "");
    phone.push("b3", &token);
    phone.act("tap", r#","which":"newest""#);
    pump(&mut core, &answers);
    assert_eq!(core.model.screen, Screen::Booking("b3".to_string()));

    // 4. Kill, send, tap: the app starts cold, and its core gets opened once it subscribes.
    phone.act("background", "");
    phone.act("kill", "");
    drop(core);
    phone.push("b4", &token);
    phone.act("tap", r#","which":"newest""#);
    let (mut core, answers) = phone.start();
    pump(&mut core, &answers);
    assert_eq!(core.model.screen, Screen::Booking("b4".to_string()));
    assert_eq!(core.model.reloads, 0, "a cold start's core saw no received event");

    // The OS rotates the token: the core POSTs the new one.
    let rotated = json::field(&phone.act("rotate_token", ""), "token").expect("a new token");
    pump(&mut core, &answers);
    assert_eq!(core.model.posted.last(), Some(&rotated));
}

#[test]
fn the_seed_checks_on_ios() {
    the_four_checks("ios");
}

#[test]
fn the_seed_checks_on_android() {
    the_four_checks("android");
}

/// A core that refused the token's answer would never POST: the tag routes it.
#[test]
fn a_failed_register_posts_nothing() {
    let phone = Phone::new("ios");
    phone.act("permission", r#","answer":"deny""#);
    phone.act("launch", "");
    let (mut core, answers) = phone.start();
    pump(&mut core, &answers);
    assert!(core.model.posted.is_empty());
}
