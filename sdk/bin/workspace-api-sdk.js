#!/usr/bin/env node
// The `workspace-api-sdk` command: the built CLI. A file of its own, present before any build, so
// that npm links the command when it installs the package (a workspace's included), whose
// dist/ is built afterwards.
require('../dist/cli.js');
