pub fn hello() {}
pub mod verify;
