//! The GSS-API of MIT Kerberos (`libgssapi_krb5.so.2`), opened when first
//! called instead of linked: a process without Kerberos never needs it, and
//! one that asks for GSSAPI without it gets `GSS_S_UNAVAILABLE` from every
//! call and, from [`library`], a message naming the library.
//!
//! The names, types and constants are those `libgssapi-sys` generates from
//! `gssapi.h`, for what the `libgssapi` crate uses.
#![allow(
    non_upper_case_globals,
    non_camel_case_types,
    non_snake_case,
    clippy::missing_safety_doc,
    clippy::too_many_arguments
)]

use std::os::raw::{c_char, c_int, c_void};
use std::sync::OnceLock;

pub type OM_uint32 = u32;
pub type gss_qop_t = OM_uint32;
pub type gss_cred_usage_t = c_int;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gss_buffer_desc_struct {
    pub length: usize,
    pub value: *mut c_void,
}
pub type gss_buffer_desc = gss_buffer_desc_struct;
pub type gss_buffer_t = *mut gss_buffer_desc_struct;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gss_OID_desc_struct {
    pub length: OM_uint32,
    pub elements: *mut c_void,
}
pub type gss_OID_desc = gss_OID_desc_struct;
pub type gss_OID = *mut gss_OID_desc_struct;
pub type gss_const_OID = *const gss_OID_desc_struct;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gss_OID_set_desc_struct {
    pub count: usize,
    pub elements: gss_OID,
}
pub type gss_OID_set_desc = gss_OID_set_desc_struct;
pub type gss_OID_set = *mut gss_OID_set_desc_struct;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gss_buffer_set_desc_struct {
    pub count: usize,
    pub elements: gss_buffer_t,
}
pub type gss_buffer_set_desc = gss_buffer_set_desc_struct;
pub type gss_buffer_set_t = *mut gss_buffer_set_desc_struct;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gss_channel_bindings_struct {
    pub initiator_addrtype: OM_uint32,
    pub initiator_address: gss_buffer_desc,
    pub acceptor_addrtype: OM_uint32,
    pub acceptor_address: gss_buffer_desc,
    pub application_data: gss_buffer_desc,
}
pub type gss_channel_bindings_t = *mut gss_channel_bindings_struct;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gss_key_value_element_struct {
    pub key: *const c_char,
    pub value: *const c_char,
}
pub type gss_key_value_element_desc = gss_key_value_element_struct;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gss_key_value_set_struct {
    pub count: OM_uint32,
    pub elements: *mut gss_key_value_element_desc,
}
pub type gss_key_value_set_desc = gss_key_value_set_struct;
pub type gss_const_key_value_set_t = *const gss_key_value_set_desc;

#[repr(C)]
#[derive(Debug, Copy, Clone)]
pub struct gss_iov_buffer_desc_struct {
    pub type_: OM_uint32,
    pub buffer: gss_buffer_desc,
}
pub type gss_iov_buffer_desc = gss_iov_buffer_desc_struct;
pub type gss_iov_buffer_t = *mut gss_iov_buffer_desc_struct;

macro_rules! opaque {
    ($($name:ident => $handle:ident),*) => {$(
        #[repr(C)]
        #[derive(Debug, Copy, Clone)]
        pub struct $name {
            _unused: [u8; 0],
        }
        pub type $handle = *mut $name;
    )*};
}
opaque!(gss_name_struct => gss_name_t, gss_cred_id_struct => gss_cred_id_t, gss_ctx_id_struct => gss_ctx_id_t);

pub const GSS_C_DELEG_FLAG: u32 = 1;
pub const GSS_C_MUTUAL_FLAG: u32 = 2;
pub const GSS_C_REPLAY_FLAG: u32 = 4;
pub const GSS_C_SEQUENCE_FLAG: u32 = 8;
pub const GSS_C_CONF_FLAG: u32 = 16;
pub const GSS_C_INTEG_FLAG: u32 = 32;
pub const GSS_C_ANON_FLAG: u32 = 64;
pub const GSS_C_PROT_READY_FLAG: u32 = 128;
pub const GSS_C_TRANS_FLAG: u32 = 256;
pub const GSS_C_DCE_STYLE: u32 = 4096;
pub const GSS_C_DELEG_POLICY_FLAG: u32 = 32768;
pub const GSS_C_BOTH: u32 = 0;
pub const GSS_C_INITIATE: u32 = 1;
pub const GSS_C_ACCEPT: u32 = 2;
pub const GSS_C_GSS_CODE: u32 = 1;
pub const GSS_C_MECH_CODE: u32 = 2;
pub const GSS_C_QOP_DEFAULT: u32 = 0;
pub const GSS_C_CALLING_ERROR_OFFSET: u32 = 24;
pub const GSS_C_ROUTINE_ERROR_OFFSET: u32 = 16;
pub const GSS_C_SUPPLEMENTARY_OFFSET: u32 = 0;
pub const GSS_S_COMPLETE: u32 = 0;
pub const GSS_IOV_BUFFER_TYPE_EMPTY: u32 = 0;
pub const GSS_IOV_BUFFER_TYPE_DATA: u32 = 1;
pub const GSS_IOV_BUFFER_TYPE_HEADER: u32 = 2;
pub const GSS_IOV_BUFFER_TYPE_MECH_PARAMS: u32 = 3;
pub const GSS_IOV_BUFFER_TYPE_TRAILER: u32 = 7;
pub const GSS_IOV_BUFFER_TYPE_PADDING: u32 = 9;
pub const GSS_IOV_BUFFER_TYPE_STREAM: u32 = 10;
pub const GSS_IOV_BUFFER_TYPE_SIGN_ONLY: u32 = 11;
pub const GSS_IOV_BUFFER_FLAG_ALLOCATE: u32 = 65536;
pub const GSS_IOV_BUFFER_FLAG_ALLOCATED: u32 = 131072;

pub const _GSS_C_INDEFINITE: OM_uint32 = 0xffff_ffff;
pub const _GSS_C_CALLING_ERROR_MASK: OM_uint32 = 0o377;
pub const _GSS_C_ROUTINE_ERROR_MASK: OM_uint32 = 0o377;
pub const _GSS_C_SUPPLEMENTARY_MASK: OM_uint32 = 0o177777;
const fn calling(n: u32) -> u32 {
    n << GSS_C_CALLING_ERROR_OFFSET
}
const fn routine(n: u32) -> u32 {
    n << GSS_C_ROUTINE_ERROR_OFFSET
}
pub const _GSS_S_CALL_INACCESSIBLE_READ: OM_uint32 = calling(1);
pub const _GSS_S_CALL_INACCESSIBLE_WRITE: OM_uint32 = calling(2);
pub const _GSS_S_CALL_BAD_STRUCTURE: OM_uint32 = calling(3);
pub const _GSS_S_BAD_MECH: OM_uint32 = routine(1);
pub const _GSS_S_BAD_NAME: OM_uint32 = routine(2);
pub const _GSS_S_BAD_NAMETYPE: OM_uint32 = routine(3);
pub const _GSS_S_BAD_BINDINGS: OM_uint32 = routine(4);
pub const _GSS_S_BAD_STATUS: OM_uint32 = routine(5);
pub const _GSS_S_BAD_SIG: OM_uint32 = routine(6);
pub const _GSS_S_BAD_MIC: OM_uint32 = routine(6);
pub const _GSS_S_NO_CRED: OM_uint32 = routine(7);
pub const _GSS_S_NO_CONTEXT: OM_uint32 = routine(8);
pub const _GSS_S_DEFECTIVE_TOKEN: OM_uint32 = routine(9);
pub const _GSS_S_DEFECTIVE_CREDENTIAL: OM_uint32 = routine(10);
pub const _GSS_S_CREDENTIALS_EXPIRED: OM_uint32 = routine(11);
pub const _GSS_S_CONTEXT_EXPIRED: OM_uint32 = routine(12);
pub const _GSS_S_FAILURE: OM_uint32 = routine(13);
pub const _GSS_S_BAD_QOP: OM_uint32 = routine(14);
pub const _GSS_S_UNAUTHORIZED: OM_uint32 = routine(15);
pub const _GSS_S_UNAVAILABLE: OM_uint32 = routine(16);
pub const _GSS_S_DUPLICATE_ELEMENT: OM_uint32 = routine(17);
pub const _GSS_S_NAME_NOT_MN: OM_uint32 = routine(18);
pub const _GSS_S_BAD_MECH_ATTR: OM_uint32 = routine(19);
pub const _GSS_S_CONTINUE_NEEDED: OM_uint32 = 1;
pub const _GSS_S_DUPLICATE_TOKEN: OM_uint32 = 2;
pub const _GSS_S_OLD_TOKEN: OM_uint32 = 4;
pub const _GSS_S_UNSEQ_TOKEN: OM_uint32 = 8;
pub const _GSS_S_GAP_TOKEN: OM_uint32 = 16;

/// The library's file name, or `ZKRECIPES_GSSAPI_LIBRARY` (a test names a missing one).
pub fn library_name() -> String {
    std::env::var("ZKRECIPES_GSSAPI_LIBRARY").unwrap_or_else(|_| DEFAULT_LIBRARY.to_string())
}

/// MIT Kerberos's GSS-API where each system keeps it: macOS carries a compatible
/// `libgssapi_krb5` in /usr/lib; on Windows it is MIT Kerberos for Windows's DLL.
#[cfg(target_os = "macos")]
const DEFAULT_LIBRARY: &str = "libgssapi_krb5.dylib";
#[cfg(windows)]
const DEFAULT_LIBRARY: &str = "gssapi64.dll";
#[cfg(not(any(target_os = "macos", windows)))]
const DEFAULT_LIBRARY: &str = "libgssapi_krb5.so.2";

/// Declares each function once: the table loaded from the library, and a
/// function of the same name that calls through it.
macro_rules! gss_api {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?);)*) => {
        struct Api {
            _library: libloading::Library,
            $($name: unsafe extern "C" fn($($ty),*) -> OM_uint32,)*
        }

        impl Api {
            unsafe fn load(name: &str) -> Result<Api, String> {
                let library = libloading::Library::new(name)
                    .map_err(|err| format!("cannot load {name}: {err}"))?;
                $(let $name = *library
                    .get::<unsafe extern "C" fn($($ty),*) -> OM_uint32>(concat!(stringify!($name), "\0").as_bytes())
                    .map_err(|err| format!("{name} has no {}: {err}", stringify!($name)))?;)*
                Ok(Api { _library: library, $($name,)* })
            }
        }

        $(
            /// Calls the loaded library; `GSS_S_UNAVAILABLE` when it cannot be loaded.
            pub unsafe fn $name($($arg: $ty),*) -> OM_uint32 {
                match api() {
                    Ok(api) => (api.$name)($($arg),*),
                    Err(_) => _GSS_S_UNAVAILABLE,
                }
            }
        )*
    };
}

gss_api! {
    fn gss_acquire_cred(minor: *mut OM_uint32, desired_name: gss_name_t, time_req: OM_uint32, desired_mechs: gss_OID_set, cred_usage: gss_cred_usage_t, output_cred_handle: *mut gss_cred_id_t, actual_mechs: *mut gss_OID_set, time_rec: *mut OM_uint32);
    fn gss_acquire_cred_from(minor: *mut OM_uint32, desired_name: gss_name_t, time_req: OM_uint32, desired_mechs: gss_OID_set, cred_usage: gss_cred_usage_t, cred_store: gss_const_key_value_set_t, output_cred_handle: *mut gss_cred_id_t, actual_mechs: *mut gss_OID_set, time_rec: *mut OM_uint32);
    fn gss_release_cred(minor: *mut OM_uint32, cred_handle: *mut gss_cred_id_t);
    fn gss_inquire_cred(minor: *mut OM_uint32, cred_handle: gss_cred_id_t, name: *mut gss_name_t, lifetime: *mut OM_uint32, cred_usage: *mut gss_cred_usage_t, mechanisms: *mut gss_OID_set);
    fn gss_inquire_cred_by_oid(minor: *mut OM_uint32, cred_handle: gss_cred_id_t, desired_object: gss_OID, data_set: *mut gss_buffer_set_t);
    fn gss_init_sec_context(minor: *mut OM_uint32, claimant_cred_handle: gss_cred_id_t, context_handle: *mut gss_ctx_id_t, target_name: gss_name_t, mech_type: gss_OID, req_flags: OM_uint32, time_req: OM_uint32, input_chan_bindings: gss_channel_bindings_t, input_token: gss_buffer_t, actual_mech_type: *mut gss_OID, output_token: gss_buffer_t, ret_flags: *mut OM_uint32, time_rec: *mut OM_uint32);
    fn gss_accept_sec_context(minor: *mut OM_uint32, context_handle: *mut gss_ctx_id_t, acceptor_cred_handle: gss_cred_id_t, input_token_buffer: gss_buffer_t, input_chan_bindings: gss_channel_bindings_t, src_name: *mut gss_name_t, mech_type: *mut gss_OID, output_token: gss_buffer_t, ret_flags: *mut OM_uint32, time_rec: *mut OM_uint32, delegated_cred_handle: *mut gss_cred_id_t);
    fn gss_delete_sec_context(minor: *mut OM_uint32, context_handle: *mut gss_ctx_id_t, output_token: gss_buffer_t);
    fn gss_inquire_context(minor: *mut OM_uint32, context_handle: gss_ctx_id_t, src_name: *mut gss_name_t, targ_name: *mut gss_name_t, lifetime_rec: *mut OM_uint32, mech_type: *mut gss_OID, ctx_flags: *mut OM_uint32, locally_initiated: *mut c_int, open: *mut c_int);
    fn gss_wrap(minor: *mut OM_uint32, context_handle: gss_ctx_id_t, conf_req_flag: c_int, qop_req: gss_qop_t, input_message_buffer: gss_buffer_t, conf_state: *mut c_int, output_message_buffer: gss_buffer_t);
    fn gss_unwrap(minor: *mut OM_uint32, context_handle: gss_ctx_id_t, input_message_buffer: gss_buffer_t, output_message_buffer: gss_buffer_t, conf_state: *mut c_int, qop_state: *mut gss_qop_t);
    fn gss_wrap_iov(minor: *mut OM_uint32, context_handle: gss_ctx_id_t, conf_req_flag: c_int, qop_req: gss_qop_t, conf_state: *mut c_int, iov: *mut gss_iov_buffer_desc, iov_count: c_int);
    fn gss_unwrap_iov(minor: *mut OM_uint32, context_handle: gss_ctx_id_t, conf_state: *mut c_int, qop_state: *mut gss_qop_t, iov: *mut gss_iov_buffer_desc, iov_count: c_int);
    fn gss_wrap_iov_length(minor: *mut OM_uint32, context_handle: gss_ctx_id_t, conf_req_flag: c_int, qop_req: gss_qop_t, conf_state: *mut c_int, iov: *mut gss_iov_buffer_desc, iov_count: c_int);
    fn gss_display_status(minor: *mut OM_uint32, status_value: OM_uint32, status_type: c_int, mech_type: gss_OID, message_context: *mut OM_uint32, status_string: gss_buffer_t);
    fn gss_import_name(minor: *mut OM_uint32, input_name_buffer: gss_buffer_t, input_name_type: gss_OID, output_name: *mut gss_name_t);
    fn gss_release_name(minor: *mut OM_uint32, input_name: *mut gss_name_t);
    fn gss_canonicalize_name(minor: *mut OM_uint32, input_name: gss_name_t, mech_type: gss_OID, output_name: *mut gss_name_t);
    fn gss_export_name(minor: *mut OM_uint32, input_name: gss_name_t, exported_name: gss_buffer_t);
    fn gss_display_name(minor: *mut OM_uint32, input_name: gss_name_t, output_name_buffer: gss_buffer_t, output_name_type: *mut gss_OID);
    fn gss_duplicate_name(minor: *mut OM_uint32, src_name: gss_name_t, dest_name: *mut gss_name_t);
    fn gss_localname(minor: *mut OM_uint32, name: gss_name_t, mech_type: gss_const_OID, localname: gss_buffer_t);
    fn gss_release_buffer(minor: *mut OM_uint32, buffer: gss_buffer_t);
    fn gss_release_buffer_set(minor: *mut OM_uint32, buffer_set: *mut gss_buffer_set_t);
    fn gss_create_empty_oid_set(minor: *mut OM_uint32, oid_set: *mut gss_OID_set);
    fn gss_add_oid_set_member(minor: *mut OM_uint32, member_oid: gss_OID, oid_set: *mut gss_OID_set);
    fn gss_test_oid_set_member(minor: *mut OM_uint32, member: gss_OID, set: gss_OID_set, present: *mut c_int);
    fn gss_release_oid_set(minor: *mut OM_uint32, set: *mut gss_OID_set);
    fn gss_store_cred_into(minor: *mut OM_uint32, input_cred_handle: gss_cred_id_t, input_usage: gss_cred_usage_t, desired_mech: gss_OID, overwrite_cred: OM_uint32, default_cred: OM_uint32, cred_store: gss_const_key_value_set_t, elements_stored: *mut gss_OID_set, cred_usage_stored: *mut gss_cred_usage_t);
    fn gss_acquire_cred_impersonate_name(minor: *mut OM_uint32, impersonator_cred_handle: gss_cred_id_t, desired_name: gss_name_t, time_req: OM_uint32, desired_mechs: gss_OID_set, cred_usage: gss_cred_usage_t, output_cred_handle: *mut gss_cred_id_t, actual_mechs: *mut gss_OID_set, time_rec: *mut OM_uint32);
}

fn api() -> Result<&'static Api, &'static str> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| unsafe { Api::load(&library_name()) })
        .as_ref()
        .map_err(String::as_str)
}
