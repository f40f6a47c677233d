use bytes::BufMut;
use num_enum::{IntoPrimitive, TryFromPrimitive};

use crate::record::{InvalidData, ReadingBuf, SerializableRecord, StaticRecord, UnsafeBuf, UnsafeRead};

#[repr(i32)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, IntoPrimitive, TryFromPrimitive, strum::Display)]
pub enum OpCode {
    Notification = 0,
    Create = 1,
    Delete = 2,
    Exists = 3,
    GetData = 4,
    SetData = 5,
    GetACL = 6,
    SetACL = 7,
    GetChildren = 8,
    Sync = 9,
    Ping = 11,
    GetChildren2 = 12,
    Check = 13,
    Multi = 14,
    Create2 = 15,
    Reconfig = 16,
    CheckWatches = 17,
    RemoveWatches = 18,
    CreateContainer = 19,
    DeleteContainer = 20,
    CreateTtl = 21,
    MultiRead = 22,
    Auth = 100,
    SetWatches = 101,
    Sasl = 102,
    GetEphemerals = 103,
    GetAllChildrenNumber = 104,
    SetWatches2 = 105,
    AddWatch = 106,
    WhoAmI = 107,
    CreateSession = -10,
    CloseSession = -11,
    Error = -1,
}

impl OpCode {
    /// The operation's name in snake case (`"create"`, `"get_children"`), as metrics label it:
    /// a protocol's second version of an operation (`Create2`, `GetChildren2`) is that operation.
    pub fn name(self) -> &'static str {
        match self {
            OpCode::Notification => "notification",
            OpCode::Create => "create",
            OpCode::Delete => "delete",
            OpCode::Exists => "exists",
            OpCode::GetData => "get_data",
            OpCode::SetData => "set_data",
            OpCode::GetACL => "get_acl",
            OpCode::SetACL => "set_acl",
            OpCode::GetChildren => "get_children",
            OpCode::Sync => "sync",
            OpCode::Ping => "ping",
            OpCode::GetChildren2 => "get_children",
            OpCode::Check => "check",
            OpCode::Multi => "multi",
            OpCode::Create2 => "create",
            OpCode::Reconfig => "reconfig",
            OpCode::CheckWatches => "check_watches",
            OpCode::RemoveWatches => "remove_watches",
            OpCode::CreateContainer => "create_container",
            OpCode::DeleteContainer => "delete_container",
            OpCode::CreateTtl => "create_ttl",
            OpCode::MultiRead => "multi_read",
            OpCode::Auth => "auth",
            OpCode::SetWatches => "set_watches",
            OpCode::Sasl => "sasl",
            OpCode::GetEphemerals => "get_ephemerals",
            OpCode::GetAllChildrenNumber => "get_all_children_number",
            OpCode::SetWatches2 => "set_watches",
            OpCode::AddWatch => "add_watch",
            OpCode::WhoAmI => "whoami",
            OpCode::CreateSession => "create_session",
            OpCode::CloseSession => "close_session",
            OpCode::Error => "error",
        }
    }
}

impl SerializableRecord for OpCode {
    fn serialize(&self, buf: &mut dyn BufMut) {
        buf.put_i32(Into::into(*self));
    }
}

impl StaticRecord for OpCode {
    fn record_len() -> usize {
        4
    }
}

impl UnsafeRead<'_> for OpCode {
    type Error = InvalidData;

    unsafe fn read(buf: &mut ReadingBuf) -> Result<Self, InvalidData> {
        match OpCode::try_from(buf.get_unchecked_i32()) {
            Err(err) => Err(InvalidData::UnexpectedOpCode(err.number)),
            Ok(op) => Ok(op),
        }
    }
}

#[cfg(all(test, upstream_tests))]
mod tests {
    use super::OpCode;

    #[test]
    fn test_display() {
        let s = format!("{}", OpCode::Auth);
        assert_eq!(s, "Auth");
    }
}
