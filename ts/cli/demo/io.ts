/** The streams the demo uses; the process's by default. */
export interface DemoIO {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
}
