package main

import "github.com/spf13/cobra"

// newCmdMailbox is this branch's `mailbox` group, holding only
// `authorize`. Main has its own (list, pause, resume): on merge this file
// goes and main's group adds newCmdMailboxAuthorize(f) to its subcommands.
func newCmdMailbox(f *Factory) *cobra.Command {
	return groupCommand("mailbox", "Manage sender mailboxes", `Sender mailboxes come from campaign files ('rindactl import campaign').
'mailbox authorize' connects an oauth2 mailbox (Google Workspace, Microsoft 365).`,
		newCmdMailboxAuthorize(f))
}
