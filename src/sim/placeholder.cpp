// placeholder until this layer lands; removed when it does
