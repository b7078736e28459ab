/** Reads a line from the terminal without echoing it; undefined when stdin is not a terminal. */
export function askSecret(prompt: string): Promise<string | undefined> {
  const { stdin, stderr } = process
  if (!stdin.isTTY) return Promise.resolve(undefined)
  stderr.write(prompt)
  stdin.setRawMode(true)
  stdin.resume()
  return new Promise((resolve) => {
    let text = ''
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n' || char === '\u0003') {
          stdin.setRawMode(false)
          stdin.pause()
          stdin.off('data', onData)
          stderr.write('\n')
          resolve(char === '\u0003' ? undefined : text)
          return
        }
        text = char === '\u007f' ? text.slice(0, -1) : text + char
      }
    }
    stdin.on('data', onData)
  })
}

/** This process's output streams, environment and terminal, as a command line reads and writes them. */
export function processIo() {
  return { stdout: process.stdout, stderr: process.stderr, env: process.env, askSecret }
}
