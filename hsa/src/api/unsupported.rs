//! The functions of the headers this runtime does not serve, exported so that every client
//! that binds them finds them, each returning what ROCr returns where the feature is missing:
//! - images and samplers (`hsa_ext_image.h`, `hsa_amd_image_*`) and the finalizer
//!   (`hsa_ext_program_*`): `HSA_STATUS_ERROR_NOT_INITIALIZED`, ROCr's answer when its image
//!   library or finalizer is not loaded (`hsa_ext_null` in ROCr's `hsa_ext_interface.cpp`);
//!   the agents' `HSA_AGENT_INFO_EXTENSIONS` say there are no images, so a client that asks
//!   first (HIP does) never calls them;
//! - IPC, SVM, graphics interop, migration, deallocation callbacks,
//!   signal groups and the deprecated code-object queries: `HSA_STATUS_ERROR` (ROCr has no
//!   single "unsupported" status for these; `HSA_AMD_SYSTEM_INFO_SVM_SUPPORTED` is false);
//! - variable definitions: `HSA_STATUS_ERROR_INVALID_SYMBOL_NAME` (aqueduct's loader resolves
//!   a code object's symbols itself; there is no undefined variable to define).
//!
//! Before `hsa_init` and after the last `hsa_shut_down` each returns
//! `HSA_STATUS_ERROR_NOT_INITIALIZED` like every other function. The arguments are not read:
//! on the System V ABI a function may ignore the arguments it is passed.

use crate::error::{Error, entry};
use crate::runtime::runtime;
use crate::status::Status;

macro_rules! unsupported {
    ($($name:ident => $status:expr, $why:literal;)*) => {$(
        #[doc = concat!("`", stringify!($name), "`: ", $why, ".")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $name() -> Status {
            entry(stringify!($name), || {
                runtime()?;
                Err(Error::new($status, $why))
            })
        }
    )*};
}

const ABSENT: Status = Status::NOT_INITIALIZED;
const UNSERVED: Status = Status::ERROR;

unsupported! {
    hsa_ext_image_get_capability => ABSENT, "images are not served";
    hsa_ext_image_get_capability_with_layout => ABSENT, "images are not served";
    hsa_ext_image_data_get_info => ABSENT, "images are not served";
    hsa_ext_image_data_get_info_with_layout => ABSENT, "images are not served";
    hsa_ext_image_create => ABSENT, "images are not served";
    hsa_ext_image_create_with_layout => ABSENT, "images are not served";
    hsa_ext_image_import => ABSENT, "images are not served";
    hsa_ext_image_export => ABSENT, "images are not served";
    hsa_ext_image_copy => ABSENT, "images are not served";
    hsa_ext_image_clear => ABSENT, "images are not served";
    hsa_ext_image_destroy => ABSENT, "images are not served";
    hsa_ext_sampler_create => ABSENT, "samplers are not served";
    hsa_ext_sampler_destroy => ABSENT, "samplers are not served";
    hsa_amd_image_create => ABSENT, "images are not served";
    hsa_amd_image_get_info_max_dim => ABSENT, "images are not served";
    hsa_ext_program_create => ABSENT, "the finalizer is not served";
    hsa_ext_program_destroy => ABSENT, "the finalizer is not served";
    hsa_ext_program_add_module => ABSENT, "the finalizer is not served";
    hsa_ext_program_iterate_modules => ABSENT, "the finalizer is not served";
    hsa_ext_program_get_info => ABSENT, "the finalizer is not served";
    hsa_ext_program_finalize => ABSENT, "the finalizer is not served";
    hsa_amd_ipc_memory_create => UNSERVED, "IPC memory is not served";
    hsa_amd_ipc_memory_attach => UNSERVED, "IPC memory is not served";
    hsa_amd_ipc_memory_detach => UNSERVED, "IPC memory is not served";
    hsa_amd_ipc_signal_create => UNSERVED, "IPC signals are not served";
    hsa_amd_ipc_signal_attach => UNSERVED, "IPC signals are not served";
    hsa_amd_svm_attributes_get => UNSERVED, "shared virtual memory is not served";
    hsa_amd_svm_attributes_set => UNSERVED, "shared virtual memory is not served";
    hsa_amd_svm_prefetch_async => UNSERVED, "shared virtual memory is not served";
    hsa_amd_interop_map_buffer => UNSERVED, "graphics interop is not served";
    hsa_amd_interop_unmap_buffer => UNSERVED, "graphics interop is not served";
    hsa_amd_memory_migrate => UNSERVED, "migration between pools is not served";
    hsa_amd_register_deallocation_callback => UNSERVED, "deallocation callbacks are not served";
    hsa_amd_deregister_deallocation_callback => UNSERVED, "deallocation callbacks are not served";
    hsa_amd_pointer_info_set_userdata => UNSERVED, "pointer user data is not served";
    hsa_amd_async_function => UNSERVED, "asynchronous functions are not served";
    hsa_signal_group_create => UNSERVED, "signal groups are not served";
    hsa_signal_group_destroy => Status::INVALID_SIGNAL_GROUP, "signal groups are not served";
    hsa_signal_group_wait_any_relaxed => Status::INVALID_SIGNAL_GROUP, "signal groups are not served";
    hsa_signal_group_wait_any_scacquire => Status::INVALID_SIGNAL_GROUP, "signal groups are not served";
    hsa_code_object_serialize => UNSERVED, "the deprecated code-object queries are not served";
    hsa_code_object_get_info => UNSERVED, "the deprecated code-object queries are not served";
    hsa_code_object_get_symbol => UNSERVED, "the deprecated code-object queries are not served";
    hsa_code_object_get_symbol_from_name => UNSERVED, "the deprecated code-object queries are not served";
    hsa_code_object_iterate_symbols => UNSERVED, "the deprecated code-object queries are not served";
    hsa_code_symbol_get_info => UNSERVED, "the deprecated code-object queries are not served";
    hsa_executable_load_program_code_object => UNSERVED, "program code objects are not served";
    hsa_executable_global_variable_define => Status::INVALID_SYMBOL_NAME, "no variable is left undefined";
    hsa_executable_agent_global_variable_define => Status::INVALID_SYMBOL_NAME, "no variable is left undefined";
    hsa_executable_readonly_variable_define => Status::INVALID_SYMBOL_NAME, "no variable is left undefined";
}
