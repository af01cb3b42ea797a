"""The toy target: five small services (bank, inventory, calendar, storage, vouchers) and their
24 tools.

Each tool is a module-level function whose first parameter is its service (`bank`,
`inventory`, `calendar`, `storage` or `vouchers`, injected by the adapter), followed by the
agent's arguments.
Its contract lives in `toy_domain/contracts/<tool>.yaml`.
"""

__version__ = "1.2.0"

# tool name -> (module, function); the adapter resolves the function at each call.
TOOLS: dict[str, tuple[str, str]] = {
    "open_account": ("toy_domain.bank", "open_account"),
    "deposit": ("toy_domain.bank", "deposit"),
    "transfer": ("toy_domain.bank", "transfer"),
    "freeze_account": ("toy_domain.bank", "freeze_account"),
    "unfreeze_account": ("toy_domain.bank", "unfreeze_account"),
    "get_balance": ("toy_domain.bank", "get_balance"),
    "reserve_item": ("toy_domain.inventory", "reserve_item"),
    "release_reservation": ("toy_domain.inventory", "release_reservation"),
    "restock": ("toy_domain.inventory", "restock"),
    "update_item": ("toy_domain.inventory", "update_item"),
    "lock_inventory": ("toy_domain.inventory", "lock_inventory"),
    "unlock_inventory": ("toy_domain.inventory", "unlock_inventory"),
    "book_meeting": ("toy_domain.calendar_service", "book_meeting"),
    "cancel_meeting": ("toy_domain.calendar_service", "cancel_meeting"),
    "rename_meeting": ("toy_domain.calendar_service", "rename_meeting"),
    "presign_download": ("toy_domain.storage", "presign_download"),
    "download": ("toy_domain.storage", "download"),
    "advance_clock": ("toy_domain.storage", "advance_clock"),
    "get_object": ("toy_domain.storage", "get_object"),
    "update_object": ("toy_domain.storage", "update_object"),
    "export_bucket": ("toy_domain.storage", "export_bucket"),
    "issue_voucher": ("toy_domain.vouchers", "issue_voucher"),
    "redeem_voucher": ("toy_domain.vouchers", "redeem_voucher"),
    "advance_voucher_clock": ("toy_domain.vouchers", "advance_voucher_clock"),
}
