// A lookup that gives NaN for rows the table lacks, as jnp.take does by
// default (BERT's token-type embedding has two rows): random ids must stay
// below 2 here, below 4 (the default) for the 6-row table.
#ids = affine_map<(b, s, d) -> (b, s)>
#out = affine_map<(b, s, d) -> (b, s, d)>
func.func @take(%types: tensor<4x8xi32>, %table: tensor<2x3xf32>,
                %tokens: tensor<4x8xi64>, %words: tensor<6x3xf32>)
    -> tensor<4x8x3xf32> {
  %nan = arith.constant 0x7FC00000 : f32
  %zero = arith.constant 0 : index
  %rows = arith.constant 2 : index
  %e = tensor.empty() : tensor<4x8x3xf32>
  %g = linalg.generic {indexing_maps = [#ids, #ids, #out], iterator_types = ["parallel", "parallel", "parallel"]} ins(%types, %tokens : tensor<4x8xi32>, tensor<4x8xi64>) outs(%e : tensor<4x8x3xf32>) {
  ^bb0(%type: i32, %token: i64, %o: f32):
    %row = arith.index_cast %type : i32 to index
    %inside = arith.cmpi ult, %row, %rows : index
    %safe = arith.select %inside, %row, %zero : index
    %col = linalg.index 2 : index
    %v = tensor.extract %table[%safe, %col] : tensor<2x3xf32>
    %filled = arith.select %inside, %v, %nan : f32
    %word = arith.index_cast %token : i64 to index
    %w = tensor.extract %words[%word, %col] : tensor<6x3xf32>
    %sum = arith.addf %filled, %w : f32
    linalg.yield %sum : f32
  } -> tensor<4x8x3xf32>
  return %g : tensor<4x8x3xf32>
}
