// Package apiutil holds what every resource handler of the v1 API shares,
// as upstream's ironic/api/controllers/v1/utils.py and ironic/common/args.py
// do for Ironic's controllers:
//
//   - Dict, an ordered JSON object: upstream renders Python dicts whose key
//     order clients see, and handlers pop keys from them (fields filtering,
//     version hiding) before rendering;
//   - query and path argument checks with upstream's messages (Query,
//     UUIDOrName, IsValidLogicalName, IsValidNodeName);
//   - JSON Patch documents with upstream's rules (DecodePatch,
//     ValidateAllowedFields, PatchValues, ApplyPatch);
//   - request body validation with the schemas the product carries
//     (Schemas, Validate), reporting upstream's "Schema error for ..."
//     messages;
//   - secret masking as oslo.utils' mask_dict_password (MaskDict).
//
// A resource handler package (node, port, portgroup, chassis, ...) reads
// its rows through the store, renders them into a Dict with ObjectDict,
// applies its own sanitizing, and writes it with api.WriteJSON. Its bodies
// are decoded with middleware.DecodeJSON and validated with Validate
// against a schema registered in schemas/ (embedded at build time).
package apiutil
