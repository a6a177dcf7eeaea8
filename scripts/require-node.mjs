// pi 1.x needs Node >= 22.19: say so in one line and stop, before anything else fails less clearly.
const [major, minor] = process.versions.node.split('.').map(Number)
if (major < 22 || (major === 22 && minor < 19)) {
  console.error(`threadhost needs Node >= 22.19 (pi 1.x); this is ${process.version}. Get Node 24 with: eval "$(scripts/node24.sh)"`)
  process.exit(1)
}
