// Runs one MXC config through the official TypeScript SDK (@microsoft/mxc-sdk), the way an
// MXC integration does, and prints {"code", "stdout", "stderr"} as one JSON line.
//
//   node sdk_run.mjs SDK_DIR CONFIG_JSON [EXECUTABLE_PATH|-] [skip-platform-check]
//
// With EXECUTABLE_PATH the SDK's `executablePath` option names the executor; with "-" the
// SDK finds lxc-exec itself (MXC_BIN_DIR/<arch>/lxc-exec, else its bundled binary). The SDK
// refuses to spawn unless bwrap (>= 0.5) or LXC is installed, whatever the executor;
// "skip-platform-check" sets its `skipPlatformCheck` option, which lifts that.
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const [sdkDir, configJson, executablePath, skip] = process.argv.slice(2);
const sdk = await import(pathToFileURL(path.join(sdkDir, 'dist', 'index.js')).href);
const options = { usePty: false };
if (executablePath && executablePath !== '-') options.executablePath = executablePath;
if (skip === 'skip-platform-check') options.skipPlatformCheck = true;
const config = JSON.parse(configJson);
// The SDK's way of passing variables: it appends them to config.process.env.
const child = sdk.spawnSandboxFromConfig(config, options, undefined, { MXC_SDK_VAR: 'from-sdk' });
let stdout = '';
let stderr = '';
child.stdout.on('data', (d) => { stdout += d; });
child.stderr.on('data', (d) => { stderr += d; });
child.stdin.end();
child.on('close', (code) => {
  process.stdout.write(JSON.stringify({ code, stdout, stderr }) + '\n');
});
