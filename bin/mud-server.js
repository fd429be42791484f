#!/usr/bin/env node
// Thin launcher: Node >= 22.18 runs the TypeScript sources directly.
import '../src/cli.ts';
