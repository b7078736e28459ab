/** A JSON body already written out (a cached rendering): sent as it is, not encoded again. */
export class EncodedJson {
  constructor(readonly text: string) {}
}
