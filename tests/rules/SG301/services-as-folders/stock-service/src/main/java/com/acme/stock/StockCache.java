package com.acme.stock;

import org.apache.rocketmq.client.consumer.DefaultMQPushConsumer;
import org.apache.rocketmq.client.consumer.listener.ConsumeConcurrentlyStatus;
import org.apache.rocketmq.client.consumer.listener.MessageListenerConcurrently;
import org.apache.rocketmq.common.protocol.heartbeat.MessageModel;

public class StockCache {
    public static void main(String[] args) throws Exception {
        DefaultMQPushConsumer consumer = new DefaultMQPushConsumer("stock-cache");
        consumer.setNamesrvAddr("mq.internal:9876");
        consumer.setMessageModel(MessageModel.BROADCASTING);
        consumer.setInstanceName("stock-cache");
        consumer.subscribe("prices", "*");
        consumer.registerMessageListener((MessageListenerConcurrently) (msgs, ctx) -> ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        consumer.start();
    }
}
